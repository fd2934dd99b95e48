import ArgumentParser
import BeaconMeshCoordinator
import BeaconMeshFobs
import BeaconMeshRegistry
import BeaconMeshService
import Foundation

/// `--secrets-key FILE`: the config's `secretsKeyFile`, for the `members` commands that write fob keys.
struct SecretsKeyOption: ParsableArguments {
    @Option(
        name: .customLong("secrets-key"),
        help: ArgumentHelp("The config's secretsKeyFile (32 random bytes): fob keys are stored sealed under it.", valueName: "FILE"))
    var secretsKey: String?

    /// The key in the file, checked against a fob `registry` already holds: a registry's fobs are all sealed under one
    /// key, or its coordinators could not open them all.
    func key(for registry: any MemberRegistry) throws -> SecretsKey {
        guard let secretsKey else { throw UsageError("fob keys need --secrets-key FILE (the config's secretsKeyFile)") }
        let key: SecretsKey
        do { key = try SecretsKey(contentsOf: secretsKey) } catch { throw UsageError("--secrets-key \(error)") }
        if let sealed = try registry.allMembers().first(where: { $0.fob != nil }), let fob = sealed.fob {
            do {
                _ = try key.open(fob.sealedKey, member: sealed.id)
            } catch {
                throw UsageError("--secrets-key \(secretsKey) is not the key the registry's fobs are sealed under")
            }
        }
        return key
    }
}

extension MembersCommand {
    /// The records of `file` with the fob keys of its `eid` column sealed under `key`; a usage error naming `missing`
    /// when it has some and there is no key.
    static func sealing(_ file: MembersCSV.File, with key: SecretsKey?, missing: String) throws -> [MemberRecord] {
        guard !file.fobs.isEmpty else { return file.records }
        guard let key else {
            throw UsageError("the members file has Eddystone-EID fob keys (its eid column): \(missing) is needed to store them sealed")
        }
        let now = Int64(Date().timeIntervalSince1970)
        return file.records.map { record in
            var sealed = record
            if let cell = file.fobs[record.id] { sealed.fob = MemberFob(sealing: cell, for: record.id, under: key, now: now) }
            return sealed
        }
    }
}
