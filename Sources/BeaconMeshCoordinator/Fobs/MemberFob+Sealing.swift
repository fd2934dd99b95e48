import BeaconMeshFobs
import BeaconMeshRegistry

extension MemberFob {
    /// `cell`'s identity key sealed for `member` under `secrets`, with a new random handle (the system's secure
    /// generator). Where the fob's counter stands: `counterNow` (read from the fob at `now`, Unix seconds), else the
    /// cell's offset, else the Unix epoch's.
    public init(sealing cell: EIDCell, for member: String, under secrets: SecretsKey, counterNow: UInt32? = nil, now: Int64) {
        self.init(
            sealedKey: secrets.seal(identityKey: cell.identityKey, member: member), rotationExponent: cell.rotationExponent,
            offset: counterNow.map { now - Int64($0) } ?? cell.offset ?? 0, handle: UInt64.random(in: 1...UInt64.max))
    }

    /// The fob as the resolver computes its ids: its identity key opened with `secrets` (throws for another key).
    func opened(for member: String, with secrets: SecretsKey) throws(SecretsKey.Failure) -> EIDResolver.Fob {
        let key = try secrets.open(sealedKey, member: member)
        guard let eid = EddystoneEID(identityKey: key, rotationExponent: rotationExponent) else {
            throw SecretsKey.Failure(description: "the fob of member '\(member)' holds no 16-byte key with K from 0 to 15")
        }
        return EIDResolver.Fob(handle: handle, eid: eid, offset: offset)
    }
}
