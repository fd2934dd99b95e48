import BeaconMeshCore

/// A member's Eddystone-EID fob as the registry keeps it: its identity key sealed under the config's
/// `secretsKeyFile` (never in the clear: `SecretsKey` seals and opens it), its rotation exponent K, where its counter
/// stands, and the handle the coordinator decides it under.
///
/// The handle is a random 64-bit id, kept among the member's beacons as `eddystone-eid:<handle>`: a sighting of an id
/// the fob advertises is resolved to it before the decisions, so a rotation is no new beacon and every part of the
/// coordinator (greetings, visits, survey marks of the member) treats the fob as any beacon of hers. A fob never
/// advertises it (2^-64), and nobody without the registry knows it.
public struct MemberFob: Sendable, Hashable {
    /// The identity key, sealed (AES-GCM) for the member under the secrets key.
    public var sealedKey: [UInt8]
    /// K: the fob's id changes every 2^K seconds.
    public var rotationExponent: UInt8
    /// Unix seconds minus the fob's counter (0: it counts from the Unix epoch).
    public var offset: Int64
    public var handle: UInt64

    public init(sealedKey: [UInt8], rotationExponent: UInt8, offset: Int64, handle: UInt64) {
        self.sealedKey = sealedKey
        self.rotationExponent = rotationExponent
        self.offset = offset
        self.handle = handle
    }

    /// The beacon key the coordinator decides the fob under.
    public var key: BeaconKey { .eddystoneEID(ephemeralID: handle) }
}
