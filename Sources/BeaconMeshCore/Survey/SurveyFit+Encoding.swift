/// A fit as the registry stores it: a few kilobytes of bytes (`BMSF`, a version, then the store, the nodes, the
/// departments and the numbers, little-endian), read back exactly.
extension SurveyFit {
    private static let magic: [UInt8] = Array("BMSF".utf8)
    private static let version: UInt8 = 1

    /// The fit's bytes.
    public func encoded() -> [UInt8] {
        var bytes = Self.magic + [Self.version]
        func put<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
        func put(_ value: Double) { put(value.bitPattern) }
        put(store)
        put(UInt32(nodes.count))
        for node in nodes {
            put(node.department)
            let id = Array(node.node.utf8)
            put(UInt8(id.count))
            bytes += id
        }
        put(UInt32(departments.count))
        for department in departments { put(department) }
        for value in weights + biases + means + inverseCovariance { put(value) }
        put(fitnessLimit)
        put(fittedAt.milliseconds)
        put(accuracy)
        put(UInt32(samples))
        return bytes
    }

    /// Reads bytes `encoded()` wrote; `nil` when they are not a fit of this version.
    public init?(encoded bytes: [UInt8]) {
        var offset = 0
        func take(_ count: Int) -> ArraySlice<UInt8>? {
            guard count >= 0, offset + count <= bytes.count else { return nil }
            defer { offset += count }
            return bytes[offset..<offset + count]
        }
        func get<T: FixedWidthInteger>(_: T.Type) -> T? {
            guard let slice = take(MemoryLayout<T>.size) else { return nil }
            var value: T = 0
            for (shift, byte) in slice.enumerated() { value |= T(byte) << (8 * shift) }
            return value
        }
        func double() -> Double? { get(UInt64.self).map(Double.init(bitPattern:)) }
        guard take(4).map(Array.init) == Self.magic, get(UInt8.self) == Self.version, let store = get(UInt16.self),
            let nodeCount = get(UInt32.self), nodeCount <= 4096
        else { return nil }
        var nodes: [SurveyNode] = []
        for _ in 0..<nodeCount {
            guard let department = get(UInt16.self), let length = get(UInt8.self), let id = take(Int(length)),
                let text = String(validating: id, as: UTF8.self), NodeAddress.isValidNodeID(text)
            else { return nil }
            nodes.append(SurveyNode(department: department, node: text))
        }
        guard let departmentCount = get(UInt32.self), departmentCount <= 65536 else { return nil }
        var departments: [UInt16] = []
        for _ in 0..<departmentCount {
            guard let department = get(UInt16.self) else { return nil }
            departments.append(department)
        }
        let width = nodes.count
        let classes = departments.count
        func doubles(_ count: Int) -> [Double]? {
            var values: [Double] = []
            values.reserveCapacity(count)
            for _ in 0..<count {
                guard let value = double() else { return nil }
                values.append(value)
            }
            return values
        }
        guard let weights = doubles(classes * width), let biases = doubles(classes), let means = doubles(classes * width),
            let inverse = doubles(width * width), let limit = double(), let fittedAt = get(Int64.self), let accuracy = double(),
            let samples = get(UInt32.self), offset == bytes.count
        else { return nil }
        self.init(
            store: store, nodes: nodes, departments: departments, weights: weights, biases: biases, means: means,
            inverseCovariance: inverse, fitnessLimit: limit, fittedAt: Timestamp(milliseconds: fittedAt), accuracy: accuracy,
            samples: Int(samples))
    }
}
