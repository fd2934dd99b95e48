import BeaconMeshCore
import CNcurses

#if canImport(Glibc)
    import Glibc
#endif

/// The full-screen terminal through ncursesw: the only code in BeaconMesh that calls curses.
///
/// Life cycle: `init` takes over the terminal (alternate screen, no echo, no line buffering, hidden cursor),
/// `draw(_:)` and `nextKey()` use it, `close()` gives it back exactly as it was; `close()` may be called more than
/// once and also runs on `deinit`, so no exit path leaves the terminal raw. Not thread-safe: curses keeps global
/// state, so one task owns the terminal and makes every call.
final class Terminal {
    /// A key press, or the terminal changing size.
    enum Key: Equatable {
        /// `q` or `Q`.
        case quit
        /// The terminal was resized; `size` has the new size.
        case resize
        /// A digit key, 1–9 (the till panel's numbers).
        case digit(Int)
        /// Any other key.
        case other
    }

    /// Why the terminal could not be taken over.
    struct OpenError: Error, CustomStringConvertible {
        var description: String
    }

    /// curses' `SCREEN *`; `nil` once closed.
    private var screen: OpaquePointer?
    /// Attributes per style, decided once colours are known.
    private var attributes: [Screen.Style: Int32] = [:]

    /// Takes over the terminal on standard input and output, in the user's locale (for UTF-8 names).
    ///
    /// A session without a UTF-8 locale (an SSH login with `LANG` unset gets plain `C`) would show José as `JosM-CM-)`;
    /// then the character set alone is switched to `C.UTF-8`, which every glibc system has.
    init() throws(OpenError) {
        setlocale(LC_ALL, "")
        if String(cString: nl_langinfo(nl_item(CODESET))) != "UTF-8" {
            setlocale(LC_CTYPE, "C.UTF-8")
        }
        guard let screen = beaconmesh_newterm() else {
            let term = getenv("TERM").map { String(cString: $0) } ?? "(not set)"
            throw OpenError(description: "cannot use this terminal for the full-screen view (TERM=\(term)); try --plain")
        }
        self.screen = screen
        let window = beaconmesh_stdscr()
        cbreak()  // keys arrive one by one; Ctrl-C still sends SIGINT
        noecho()
        nonl()
        keypad(window, true)  // KEY_RESIZE and arrow keys as single codes
        nodelay(window, true)  // getch never waits
        curs_set(0)
        attributes = Self.attributes(colours: has_colors())
    }

    deinit {
        close()
    }

    /// The terminal's size as curses knows it (updated when `nextKey()` reports `.resize`).
    var size: TerminalSize {
        TerminalSize(columns: Int(beaconmesh_columns()), rows: Int(beaconmesh_rows()))
    }

    /// The next pending key, or `nil` at once when none is waiting.
    func nextKey() -> Key? {
        guard screen != nil else { return nil }
        let code = getch()
        switch code {
        case ERR: return nil
        case KEY_RESIZE: return .resize
        case Int32(UInt8(ascii: "q")), Int32(UInt8(ascii: "Q")): return .quit
        case Int32(UInt8(ascii: "1"))...Int32(UInt8(ascii: "9")): return .digit(Int(code) - Int(UInt8(ascii: "0")))
        default: return .other
        }
    }

    /// Replaces what the terminal shows with `frame`; curses sends only the cells that changed.
    func draw(_ frame: Screen) {
        guard screen != nil else { return }
        erase()
        for (y, row) in frame.rows.enumerated() {
            var x = 0
            for span in row.spans {
                beaconmesh_attrset(attributes[span.style] ?? 0)
                // The bottom-right cell reports ERR (the cursor cannot move past it) but is drawn; nothing to handle.
                _ = mvaddstr(Int32(y), Int32(x), span.text)
                x += TerminalWidth.of(span.text)  // place each span by our own widths, so a mismatch cannot spread
            }
        }
        beaconmesh_attrset(beaconmesh_a_normal())
        refresh()
    }

    /// Gives the terminal back: normal screen, echo, line buffering and cursor restored. Safe to call again.
    func close() {
        guard let screen else { return }
        curs_set(1)
        endwin()
        delscreen(screen)
        self.screen = nil
    }

    /// Colour pairs and attributes per style; reverse video stands in for colour on a monochrome terminal.
    private static func attributes(colours: Bool) -> [Screen.Style: Int32] {
        let bold = beaconmesh_a_bold()
        let dim = beaconmesh_a_dim()
        let reverse = beaconmesh_a_reverse()
        guard colours else {
            return [
                .normal: 0, .title: reverse | bold, .header: bold, .dim: dim, .arrival: reverse | bold,
                .stale: reverse, .good: 0, .bad: bold, .flash: reverse, .notice: bold,
            ]
        }
        start_color()
        use_default_colors()  // -1: the terminal's own foreground and background
        let pairs: [(Screen.Style, Int16, Int16, Int32)] = [
            (.title, Int16(COLOR_WHITE), Int16(COLOR_BLUE), bold),
            (.header, Int16(COLOR_CYAN), -1, bold),
            (.arrival, Int16(COLOR_WHITE), Int16(COLOR_RED), bold),
            (.stale, Int16(COLOR_BLACK), Int16(COLOR_YELLOW), bold),
            (.good, Int16(COLOR_GREEN), -1, 0),
            (.bad, Int16(COLOR_RED), -1, bold),
            (.flash, Int16(COLOR_BLACK), Int16(COLOR_GREEN), bold),
        ]
        var result: [Screen.Style: Int32] = [.normal: 0, .dim: dim, .notice: bold]
        for (index, (style, foreground, background, extra)) in pairs.enumerated() {
            let pair = Int16(index + 1)
            init_pair(pair, foreground, background)
            result[style] = beaconmesh_color_pair(pair) | extra
        }
        return result
    }
}
