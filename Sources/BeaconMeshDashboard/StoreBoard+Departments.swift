import BeaconMeshCore

extension StoreBoard {
    /// The store's departments as this dashboard knows them, in number order, each with its name: those the latest
    /// presence snapshot counts (its coordinator lists every department of its config there), and those its members,
    /// nodes and events name. A department whose name was never heard is `Department N`.
    public var departments: [(id: UInt16, name: String)] {
        var ids = Set(model.departmentNames.keys)
        if let snapshot = model.snapshot {
            ids.formUnion(snapshot.occupancy.keys)
            ids.formUnion(snapshot.members.compactMap(\.department))
        }
        ids.formUnion(nodes.keys.map(\.department))
        return ids.sorted().map { (id: $0, name: model.departmentNames[$0] ?? "Department \($0)") }
    }
}
