/// The property wrappers of the object layer (so the schema builder can tell them from a
/// class's other stored properties).
protocol ManagedPropertyWrapper {}
