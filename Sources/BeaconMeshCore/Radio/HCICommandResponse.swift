/// The controller's answer to a command: a Command Complete (0x0E) or Command Status (0x0F) event, read strictly.
///
/// Command Complete: `04 0E len | allowed command packets | opcode (2, LE) | status | return parameters…`.
/// Command Status:   `04 0F 04  | status | allowed command packets | opcode (2, LE)`.
/// A Command Complete with no return parameters at all (as for the "no operation" opcode 0x0000) reads as success.
/// Any other event, or one whose length byte promises more than is there, is not a response (`nil`).
public struct HCICommandResponse: Hashable, Sendable {
    /// Which of the two events answered.
    public enum Kind: Hashable, Sendable {
        /// Command Complete (0x0E): the command ran; `returnParameters` hold its result.
        case complete
        /// Command Status (0x0F): the command was accepted (status 0, the outcome comes later in another event) or
        /// refused (non-zero status).
        case status
    }

    /// The HCI event code of Command Complete.
    public static let commandCompleteEventCode: UInt8 = 0x0E
    /// The HCI event code of Command Status.
    public static let commandStatusEventCode: UInt8 = 0x0F

    public var kind: Kind
    /// The command answered (0x0000 when the controller only reports free command slots).
    public var opcode: HCIOpcode
    /// Success or why the command was refused.
    public var status: HCIStatusCode
    /// Return parameters after the status byte (Command Complete only; empty for Command Status).
    public var returnParameters: [UInt8]
    /// How many more commands the controller accepts now.
    public var allowedCommandPackets: UInt8

    public init(
        kind: Kind, opcode: HCIOpcode, status: HCIStatusCode, returnParameters: [UInt8] = [],
        allowedCommandPackets: UInt8 = 1
    ) {
        self.kind = kind
        self.opcode = opcode
        self.status = status
        self.returnParameters = returnParameters
        self.allowedCommandPackets = allowedCommandPackets
    }

    /// The response in an H4 event packet (`04 0E …` or `04 0F …`), or `nil` if it is none.
    public init?(h4Packet packet: UnsafeRawBufferPointer) {
        guard packet.count >= 3, packet[0] == HCIEventParser.h4EventIndicator else { return nil }
        let length = Int(packet[2])
        guard 3 + length <= packet.count else { return nil }
        let parameters = UnsafeRawBufferPointer(rebasing: packet[3..<(3 + length)])
        switch packet[1] {
        case Self.commandCompleteEventCode:
            guard parameters.count >= 3 else { return nil }
            kind = .complete
            allowedCommandPackets = parameters[0]
            opcode = HCIOpcode(rawValue: UInt16(parameters[1]) | UInt16(parameters[2]) << 8)
            status = HCIStatusCode(rawValue: parameters.count > 3 ? parameters[3] : 0)
            returnParameters = parameters.count > 4 ? Array(parameters[4...]) : []
        case Self.commandStatusEventCode:
            guard parameters.count >= 4 else { return nil }
            kind = .status
            status = HCIStatusCode(rawValue: parameters[0])
            allowedCommandPackets = parameters[1]
            opcode = HCIOpcode(rawValue: UInt16(parameters[2]) | UInt16(parameters[3]) << 8)
            returnParameters = []
        default:
            return nil
        }
    }

    /// The response in an H4 event packet given as bytes, or `nil` if it is none.
    public init?(h4Packet packet: [UInt8]) {
        guard let response = packet.withUnsafeBytes({ HCICommandResponse(h4Packet: $0) }) else { return nil }
        self = response
    }

    /// Whether this response settles the command: a Command Complete, or a Command Status that refuses it.
    /// (A Command Status with success only says the command started.)
    public var isFinal: Bool { kind == .complete || !status.isSuccess }
}
