/// Lets a boxed `Optional` of any type be unwrapped.
protocol OptionalUnwrapping {
    var unwrappedAny: Any? { get }
}

extension Optional: OptionalUnwrapping {
    var unwrappedAny: Any? { self.map { $0 as Any } }
}
