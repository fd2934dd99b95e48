import BeaconMeshService

/// A users file that cannot be used: one line naming the file, the line when known, and what is wrong.
public typealias UsersFileError = UnusableFileError
