import BeaconMeshService

/// A config file that cannot be used: one line naming the file, the place and what is wrong.
public typealias ConfigurationError = UnusableFileError
