/// The pages' stylesheet: one column on a phone (the members table becomes cards), two columns from tablet width,
/// larger type on a wall display; new arrivals glow for 1.5 s; stale data is greyed and says so.
public enum DashboardStylesheet {
    public static let text = #"""
        :root {
          --bg: #f4f1ec; --card: #ffffff; --ink: #1f2328; --muted: #5f6670; --line: #e2ddd5;
          --accent: #0a6e5c; --arrive: #ffe08a; --warn: #b3261e; --warn-bg: #fdecea; --ok: #1a7f37;
          font-size: clamp(15px, 0.55vw + 11px, 26px);
        }
        * { box-sizing: border-box; }
        body {
          margin: 0; background: var(--bg); color: var(--ink);
          font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Noto Sans CJK SC", "Noto Sans CJK JP",
            "WenQuanYi Zen Hei", "Droid Sans Fallback", sans-serif;
          line-height: 1.35;
        }
        a { color: var(--accent); }
        .sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
        header.top { padding: 0.8rem 1.2rem 0.6rem; background: var(--card); border-bottom: 1px solid var(--line); }
        .brand { font-weight: 700; letter-spacing: 0.02em; color: var(--muted); }
        .brand a { text-decoration: none; }
        header.top { position: relative; }
        form.account { position: absolute; top: 0.8rem; right: 1.2rem; margin: 0; font-size: 0.9rem; color: var(--muted); }
        form.account button, form#login button { font: inherit; padding: 0.3rem 0.9rem; border: 1px solid var(--line);
          border-radius: 0.4rem; background: var(--card); color: var(--accent); cursor: pointer; }

        /* Sign-in form */
        main.login { max-width: 24rem; }
        form#login { display: grid; gap: 0.4rem; padding: 1rem; background: var(--card); border-radius: 0.6rem; }
        form#login input { font: inherit; padding: 0.4rem 0.5rem; border: 1px solid var(--line); border-radius: 0.4rem; }
        form#login button { margin-top: 0.6rem; background: var(--accent); color: #fff; }
        #login-message { color: var(--warn); font-weight: 600; }
        h1 { margin: 0.2rem 0; font-size: 1.6rem; }
        h2 { font-size: 1rem; margin: 0 0 0.5rem; color: var(--muted); text-transform: uppercase; letter-spacing: 0.06em; }
        .status { margin: 0.2rem 0 0; font-size: 0.95rem; color: var(--muted); }
        .status .live { color: var(--ok); font-weight: 600; }
        .status .flash { margin-left: 0.6rem; padding: 0.05rem 0.5rem; border-radius: 1rem; background: var(--arrive); color: var(--ink); }
        body.stale .status, .status .problem { color: var(--warn); font-weight: 600; }
        body.stale main { opacity: 0.55; filter: grayscale(0.6); transition: opacity 0.3s; }
        main { padding: 1rem 1.2rem 2rem; }
        section { margin-bottom: 1.2rem; }
        .empty { color: var(--muted); font-style: italic; }
        .count { color: var(--ink); }

        /* Store page */
        main.store { display: grid; grid-template-columns: minmax(0, 1fr); gap: 1.2rem; }
        @media (min-width: 900px) { main.store { grid-template-columns: minmax(0, 3fr) minmax(16rem, 1fr); } }
        table.members { width: 100%; border-collapse: collapse; background: var(--card); border-radius: 0.6rem; overflow: hidden; }
        table.members th { text-align: left; font-size: 0.8rem; color: var(--muted); font-weight: 600; padding: 0.5rem 0.6rem;
          border-bottom: 1px solid var(--line); }
        table.members td { padding: 0.45rem 0.6rem; border-bottom: 1px solid var(--line); vertical-align: middle; }
        table.members td.name, .events li { overflow-wrap: anywhere; }  /* a long name without spaces stays in its column */
        table.members tr:last-child td { border-bottom: 0; }
        table.members tr { transition: background-color 0.4s; }
        table.members tr.arrived { background: var(--arrive); }
        td.photo, th.photo { width: 3.6rem; }
        .avatar { width: 2.8rem; height: 2.8rem; border-radius: 50%; object-fit: cover; display: block; }
        .initials { display: flex; align-items: center; justify-content: center; background: #d4e7e2; color: var(--accent);
          font-weight: 700; font-size: 1rem; }
        td.name { font-weight: 600; }
        td.department.unknown { color: var(--muted); font-style: italic; }
        td.confidence { font-variant-numeric: tabular-nums; text-align: right; }
        .proximity { display: inline-block; padding: 0.05rem 0.5rem; border-radius: 1rem; font-size: 0.85rem; background: #eef1f4; }
        .proximity.immediate { background: #d3f0dc; } .proximity.near { background: #e3efff; } .proximity.far { background: #f3ece0; }
        ul, ol { list-style: none; margin: 0; padding: 0; }
        .side section { background: var(--card); border-radius: 0.6rem; padding: 0.7rem 0.8rem; }
        .side li { padding: 0.25rem 0; border-bottom: 1px dashed var(--line); display: flex; justify-content: space-between; gap: 0.6rem; }
        .side li:last-child { border-bottom: 0; }
        .occupancy li { display: flex; flex-wrap: wrap; justify-content: space-between; column-gap: 0.8rem; row-gap: 0; }
        .occupancy .dept-count { white-space: nowrap; color: var(--muted); font-size: 0.85rem; align-self: center; margin-left: auto; }
        .nodes li.offline, .store-card .offline { color: var(--warn); font-weight: 600; }
        .events li { display: block; font-size: 0.9rem; }
        .events time, .promos time { color: var(--muted); font-variant-numeric: tabular-nums; margin-right: 0.4rem; }
        .events li.arrived { border-left: 3px solid var(--accent); padding-left: 0.4rem; }
        .events .why { display: block; color: var(--muted); font-size: 0.8rem; }
        .events li.promo, .promos li { color: #6b3fa0; }

        /* Phones: the members table as cards */
        @media (max-width: 640px) {
          table.members thead { display: none; }
          table.members, table.members tbody { display: block; }
          table.members tr { display: grid; grid-template-columns: 3.4rem 1fr auto; grid-template-areas:
            "photo name visit" "photo drink drink" "photo dept conf" "photo prox time"; column-gap: 0.6rem;
            padding: 0.5rem 0.6rem; border-bottom: 1px solid var(--line); }
          table.members td { padding: 0.05rem 0; border: 0; }
          td.photo { grid-area: photo; } td.name { grid-area: name; } td.visit { grid-area: visit; color: var(--muted); }
          td.drink { grid-area: drink; color: var(--muted); } td.department { grid-area: dept; }
          td.confidence { grid-area: conf; } td.proximity-cell { grid-area: prox; } td.time { grid-area: time; color: var(--muted); }
        }

        /* Chain overview */
        .totals { display: flex; flex-wrap: wrap; gap: 0.8rem; }
        .total { background: var(--card); border-radius: 0.6rem; padding: 0.6rem 1rem; min-width: 7rem; }
        .total .figure { display: block; font-size: 1.8rem; font-weight: 700; font-variant-numeric: tabular-nums; }
        .total .label { color: var(--muted); font-size: 0.85rem; }
        .stores { display: grid; grid-template-columns: repeat(auto-fill, minmax(15rem, 1fr)); gap: 0.8rem; }
        .store-card { background: var(--card); border-radius: 0.6rem; padding: 0.8rem; border: 2px solid transparent; color: inherit;
          text-decoration: none; display: block; }
        .store-card:hover { border-color: var(--line); }
        .store-card.attention { border-color: var(--warn); background: var(--warn-bg); }
        .store-card h3 { margin: 0 0 0.3rem; font-size: 1.1rem; }
        .store-card .number { color: var(--muted); font-weight: 400; }
        .store-card .headcount { font-size: 1.05rem; margin-bottom: 0.3rem; }
        .store-card .headcount strong { font-size: 1.4rem; }
        .store-card .departments { font-size: 0.85rem; color: var(--muted); margin-bottom: 0.3rem; }
        .store-card .meta { font-size: 0.85rem; }
        .store-card .problems { color: var(--warn); font-weight: 600; font-size: 0.9rem; margin-top: 0.3rem; }
        .coordinators li { padding: 0.2rem 0; }
        .coordinators .offline { color: var(--warn); font-weight: 600; }

        /* Analytics: figures, a period picker, charts (SVG drawn by the program) each with its table and CSV */
        main.analytics { display: grid; grid-template-columns: minmax(0, 1fr); gap: 1rem; }
        @media (min-width: 1100px) { main.analytics { grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); }
          main.analytics > form.period, main.analytics > .totals, main.analytics > a.csv.summary { grid-column: 1 / -1; } }
        form.period { display: flex; flex-wrap: wrap; align-items: center; gap: 0.4rem 0.8rem; background: var(--card);
          border-radius: 0.6rem; padding: 0.6rem 0.8rem; }
        form.period input, form.period button { font: inherit; padding: 0.2rem 0.4rem; border: 1px solid var(--line); border-radius: 0.4rem; }
        form.period .presets a { margin-right: 0.5rem; }
        form.period .period-shown { flex-basis: 100%; margin: 0; color: var(--muted); font-size: 0.85rem; }
        .chart-box { background: var(--card); border-radius: 0.6rem; padding: 0.7rem 0.8rem; margin: 0; min-width: 0; }
        svg.chart { display: block; width: 100%; height: auto; max-height: 70vh; }
        svg.chart text { font-family: inherit; fill: var(--ink); }
        svg.chart .tick { font-size: 11px; fill: var(--muted); }
        svg.chart .legend, svg.chart .value { font-size: 12px; }
        svg.chart .cell-value { font-size: 13px; font-weight: 700; }
        table.figures-table { border-collapse: collapse; margin: 0.6rem 0 0.3rem; font-size: 0.9rem; max-width: 100%; }
        table.figures-table caption { text-align: left; color: var(--muted); font-size: 0.8rem; }
        table.figures-table th, table.figures-table td { padding: 0.2rem 0.7rem 0.2rem 0; text-align: left; border-bottom: 1px solid var(--line);
          font-variant-numeric: tabular-nums; overflow-wrap: anywhere; }
        a.csv { font-size: 0.85rem; }
        """#
}
