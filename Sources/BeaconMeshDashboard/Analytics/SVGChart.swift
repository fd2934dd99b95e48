/// Charts as SVG markup drawn by the dashboard itself (no library, no CDN, nothing fetched): they scale with the
/// page (a `viewBox`, width 100 %), so one drawing serves a phone and a wall display. Every chart is an image with a
/// title and a description that say what it shows in words (`role="img"`, `aria-labelledby`); each bar carries its
/// value as a tooltip (`<title>`) and in `data-value`, and the page puts the same figures in a table beside it.
/// Colours are presentation attributes, not inline styles, which the dashboard's Content-Security-Policy forbids.
enum SVGChart {
    /// One series of a bar chart: a name (the legend) and one value per label.
    struct Series {
        var name: String
        var colour: String
        var values: [Double]
    }

    static let width = 640.0
    static let height = 260.0
    private static let margin = (left: 44.0, right: 12.0, top: 28.0, bottom: 36.0)

    /// Grouped vertical bars: one group per label, one bar per series.
    static func bars(id: String, title: String, summary: String, labels: [String], series: [Series]) -> String {
        let top = 4 * niceCeiling((series.flatMap(\.values).max() ?? 0) / 4)
        let plotWidth = width - margin.left - margin.right
        let plotHeight = height - margin.top - margin.bottom
        let groupWidth = labels.isEmpty ? plotWidth : plotWidth / Double(labels.count)
        let barWidth = min(36, max(1, groupWidth * 0.8 / Double(max(1, series.count))))
        var out = open(id: id, title: title, summary: summary, height: height)
        out += axis(top: top, plotHeight: plotHeight)
        for (index, label) in labels.enumerated() {
            let groupX = margin.left + Double(index) * groupWidth + (groupWidth - barWidth * Double(series.count)) / 2
            for (number, line) in series.enumerated() {
                let value = index < line.values.count ? line.values[index] : 0
                let barHeight = top > 0 ? plotHeight * value / top : 0
                out +=
                    #"<rect class="bar" data-series="\#(escape(line.name))" data-label="\#(escape(label))" data-value="\#(format(value))" "#
                out += #"x="\#(format(groupX + Double(number) * barWidth))" y="\#(format(margin.top + plotHeight - barHeight))" "#
                out += #"width="\#(format(barWidth))" height="\#(format(barHeight))" fill="\#(line.colour)">"#
                out += "<title>\(escape(label)): \(escape(line.name)) \(format(value))</title></rect>"
            }
            // Label every group when they fit, else every few.
            let step = max(1, Int((Double(labels.count) * 34 / plotWidth).rounded(.up)))
            if index % step == 0 {
                out +=
                    #"<text x="\#(format(margin.left + (Double(index) + 0.5) * groupWidth))" y="\#(format(height - margin.bottom + 16))" text-anchor="middle" class="tick">\#(escape(label))</text>"#
            }
        }
        out += legend(series.map { ($0.name, $0.colour) })
        return out + "</svg>"
    }

    /// Horizontal bars, one row per label, with a caption at each bar's end.
    static func horizontalBars(
        id: String, title: String, summary: String, rows: [(label: String, value: Double, caption: String)], colour: String
    ) -> String {
        let rowHeight = 30.0
        let chartHeight = max(60, margin.top + Double(rows.count) * rowHeight + 8)
        let labelWidth = 150.0
        let plotWidth = width - labelWidth - 140
        let top = niceCeiling(rows.map(\.value).max() ?? 0)
        var out = open(id: id, title: title, summary: summary, height: chartHeight)
        for (index, row) in rows.enumerated() {
            let y = margin.top + Double(index) * rowHeight
            let barWidth = top > 0 ? plotWidth * row.value / top : 0
            out +=
                #"<text x="\#(format(labelWidth - 8))" y="\#(format(y + 19))" text-anchor="end" class="tick">\#(escape(row.label))</text>"#
            out += #"<rect class="bar" data-label="\#(escape(row.label))" data-value="\#(format(row.value))" x="\#(format(labelWidth))" "#
            out += #"y="\#(format(y + 4))" width="\#(format(barWidth))" height="\#(format(rowHeight - 8))" fill="\#(colour)">"#
            out += "<title>\(escape(row.label)): \(escape(row.caption))</title></rect>"
            out += #"<text x="\#(format(labelWidth + barWidth + 6))" y="\#(format(y + 19))" class="value">\#(escape(row.caption))</text>"#
        }
        return out + "</svg>"
    }

    /// A from × to matrix of counts (the walks between departments), darker for more.
    static func matrix(id: String, title: String, summary: String, labels: [String], counts: [[Int]]) -> String {
        let cell = 44.0
        let labelWidth = 150.0
        let chartHeight = margin.top + 40 + Double(labels.count) * cell + 8
        let largest = max(1, counts.flatMap { $0 }.max() ?? 0)
        var out = open(id: id, title: title, summary: summary, height: chartHeight)
        for (column, label) in labels.enumerated() {
            out +=
                #"<text x="\#(format(labelWidth + Double(column) * cell + cell / 2))" y="\#(format(margin.top + 28))" text-anchor="middle" class="tick">\#(escape(String(label.prefix(6))))</text>"#
        }
        for (row, from) in labels.enumerated() {
            let y = margin.top + 40 + Double(row) * cell
            out +=
                #"<text x="\#(format(labelWidth - 8))" y="\#(format(y + cell / 2 + 5))" text-anchor="end" class="tick">\#(escape(from))</text>"#
            for (column, to) in labels.enumerated() {
                let count = counts[row][column]
                let x = labelWidth + Double(column) * cell
                out +=
                    #"<rect class="cell" data-from="\#(escape(from))" data-to="\#(escape(to))" data-value="\#(count)" x="\#(format(x + 1))" y="\#(format(y + 1))" "#
                out +=
                    ##"width="\##(format(cell - 2))" height="\##(format(cell - 2))" fill="#1f6feb" fill-opacity="\##(format(count == 0 ? 0.04 : 0.15 + 0.85 * Double(count) / Double(largest)))">"##
                out += "<title>\(escape(from)) → \(escape(to)): \(count)</title></rect>"
                if count > 0 {
                    out +=
                        #"<text x="\#(format(x + cell / 2))" y="\#(format(y + cell / 2 + 5))" text-anchor="middle" class="cell-value">\#(count)</text>"#
                }
            }
        }
        return out + "</svg>"
    }

    // MARK: Parts

    private static func open(id: String, title: String, summary: String, height: Double) -> String {
        #"<svg id="\#(id)" class="chart" viewBox="0 0 \#(format(width)) \#(format(height))" role="img" aria-labelledby="\#(id)-title \#(id)-desc" xmlns="http://www.w3.org/2000/svg">"#
            + #"<title id="\#(id)-title">\#(escape(title))</title><desc id="\#(id)-desc">\#(escape(summary))</desc>"#
    }

    private static func axis(top: Double, plotHeight: Double) -> String {
        var out = ""
        for step in 0...4 {
            let value = top * Double(step) / 4
            let y = margin.top + plotHeight - plotHeight * Double(step) / 4
            out +=
                ##"<line x1="\##(format(margin.left))" x2="\##(format(width - margin.right))" y1="\##(format(y))" y2="\##(format(y))" stroke="#8884" stroke-width="1"/>"##
            out += #"<text x="\#(format(margin.left - 6))" y="\#(format(y + 4))" text-anchor="end" class="tick">\#(format(value))</text>"#
        }
        return out
    }

    private static func legend(_ entries: [(String, String)]) -> String {
        var out = ""
        var x = margin.left
        for (name, colour) in entries {
            out += #"<rect x="\#(format(x))" y="6" width="12" height="12" fill="\#(colour)"/>"#
            out += #"<text x="\#(format(x + 16))" y="16" class="legend">\#(escape(name))</text>"#
            x += 24 + Double(name.count) * 7
        }
        return out
    }

    /// The smallest "round" number at or above `value` (1, 2, 5 × 10ⁿ), so the axis reads well; 1 for nothing.
    static func niceCeiling(_ value: Double) -> Double {
        guard value > 0, value.isFinite else { return 1 }
        var magnitude = 1.0
        while magnitude * 10 <= value { magnitude *= 10 }
        while magnitude > value { magnitude /= 10 }
        for factor in [1.0, 2, 5, 10] where factor * magnitude >= value { return factor * magnitude }
        return 10 * magnitude
    }

    /// A number as the SVG wants it: at most one decimal, no exponent.
    static func format(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int64(rounded)) : String(rounded)
    }

    private static func escape(_ text: String) -> String { HTMLText.escape(text) }
}
