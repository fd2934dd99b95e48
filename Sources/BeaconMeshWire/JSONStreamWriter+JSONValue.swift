extension JSONStreamWriter {
    /// Writes a whole `JSONValue` tree (the dashboard's page data, small payloads), members in their order.
    mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let flag): bool(flag)
        case .int(let number): int(number)
        case .double(let number): double(number)
        case .string(let text): string(text)
        case .array(let elements): array(elements) { element, writer in writer.value(element) }
        case .object(let members):
            object { writer in
                for (name, member) in members {
                    writer.key(name)
                    writer.value(member)
                }
            }
        }
    }
}
