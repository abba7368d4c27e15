/// The key-path API of model classes: computed properties and observation, with the model
/// class as `Self` (so `\.firstName` needs no type). ``ManagedObject`` adopts it; other types
/// should not.
public protocol ModelObject: AnyObject {}

extension ManagedObject: ModelObject {}
