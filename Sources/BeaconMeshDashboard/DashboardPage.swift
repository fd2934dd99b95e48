/// The two pages' HTML: a skeleton the page's script (`DashboardScript`) fills from the live stream. Plain HTML,
/// served by the program; no CDN, no build step, nothing fetched from elsewhere (the favicon is an empty data URL,
/// so the browser asks for nothing that is not there). With sign-in on, the header names the user (escaped) and has
/// a sign-out button.
public enum DashboardPage {
    /// The chain overview at `/`; `signedInAs` is the signed-in user's name.
    public static func overview(signedInAs user: String? = nil) -> String {
        document(
            title: "BeaconMesh · chain overview", attributes: #"data-page="chain""#,
            body: #"""
                <header class="top">
                  <div class="brand"><a href="/">BeaconMesh</a></div>\#(account(user))
                  <h1 id="title">Chain overview</h1>
                  <p id="status" class="status" role="status" aria-live="polite">Connecting…</p>
                </header>
                <main>
                  <section class="totals" aria-label="Totals">
                    <div class="total"><span id="total-stores" class="figure">–</span><span class="label">stores</span></div>
                    <div class="total"><span id="total-members" class="figure">–</span><span class="label">members</span></div>
                    <div class="total"><span id="total-guests" class="figure">–</span><span class="label">guests</span></div>
                    <div class="total"><span id="total-offline" class="figure">–</span><span class="label">nodes offline</span></div>
                    <div class="total"><span id="total-attention" class="figure">–</span><span class="label">need attention</span></div>
                  </section>
                  <section id="stores" class="stores" aria-label="Stores"></section>
                  <p id="no-stores" class="empty">No store heard yet.</p>
                  <section class="coordinators"><h2>Coordinators</h2><ul id="coordinators"></ul></section>
                </main>
                """#)
    }

    /// A store's live page at `/stores/{store}`; `signedInAs` is the signed-in user's name.
    public static func store(_ store: UInt16, signedInAs user: String? = nil) -> String {
        document(
            title: "Store \(store) · BeaconMesh", attributes: #"data-page="store" data-store="\#(store)""#,
            body: #"""
                <header class="top">
                  <div class="brand"><a href="/">BeaconMesh</a> <span class="crumb">/ store \#(store)</span></div>\#(account(user))
                  <h1 id="title">Store \#(store)</h1>
                  <p id="status" class="status" role="status" aria-live="polite">Connecting…</p>
                </header>
                <main class="store">
                  <section class="people">
                    <h2>In the store <span id="member-count" class="count"></span></h2>
                    <table id="members" class="members">
                      <thead><tr><th class="photo"><span class="sr">Photo</span></th><th>Name</th><th>Favourite drink</th>
                        <th>Department</th><th>Confidence</th><th>Proximity</th><th>In store</th><th>Visit</th></tr></thead>
                      <tbody></tbody>
                    </table>
                    <p id="no-members" class="empty">Nobody here yet.</p>
                  </section>
                  <aside class="side">
                    <section><h2>Departments</h2><ul id="occupancy" class="occupancy"></ul></section>
                    <section><h2>Nodes</h2><ul id="nodes" class="nodes"></ul></section>
                    <section><h2>Promos</h2><ul id="promos" class="promos"></ul></section>
                    <section><h2>Recent events</h2><ol id="events" class="events"></ol></section>
                  </aside>
                </main>
                """#)
    }

    /// Who is signed in and the sign-out button, or nothing when sign-in is off.
    private static func account(_ user: String?) -> String {
        guard let user else { return "" }
        return #"""

              <form class="account" method="post" action="/logout"><span id="signed-in-as">Signed in as \#(HTMLText.escape(user))</span> <button id="sign-out" type="submit">Sign out</button></form>
            """#
    }

    private static func document(title: String, attributes: String, body: String) -> String {
        #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\#(title)</title>
        <link rel="icon" href="data:,">
        <link rel="stylesheet" href="/assets/dashboard.css">
        </head>
        <body \#(attributes) class="connecting">
        \#(body)
        <script src="/assets/dashboard.js"></script>
        </body>
        </html>

        """#
    }
}
