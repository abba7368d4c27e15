// Placeholder until the benchmark lands.
print("strata-bench: not built yet")
