/// The pages' HTML (`Web/overview.html`, `Web/store.html`, `Web/survey.html`): a skeleton the page's script
/// (`DashboardScript`; the survey page's own, `Web/survey.js`) fills from the live stream or the API. Plain HTML,
/// served by the program; no CDN, no build step, nothing fetched from elsewhere (the favicon is an empty data URL,
/// so the browser asks for nothing that is not there). With sign-in on, the header names the user (escaped) and has
/// a sign-out button.
public enum DashboardPage {
    /// The chain overview at `/`; `signedInAs` is the signed-in user's name.
    public static func overview(signedInAs user: String? = nil) -> String {
        DashboardWeb.fill(DashboardWeb.overview, ["account": account(user)])
    }

    /// A store's live page at `/stores/{store}`; `signedInAs` is the signed-in user's name.
    public static func store(_ store: UInt16, signedInAs user: String? = nil) -> String {
        DashboardWeb.fill(DashboardWeb.store, ["store": String(store), "account": account(user)])
    }

    /// A store's survey page at `/stores/{store}/survey` (`Web/survey.html`, filled by `Web/survey.js` from
    /// `/api/stores/{store}/survey`); `signedInAs` is the signed-in user's name.
    public static func survey(_ store: UInt16, signedInAs user: String? = nil) -> String {
        DashboardWeb.fill(DashboardWeb.survey, ["store": String(store), "account": account(user)])
    }

    /// Who is signed in and the sign-out button (`Web/account.html`, on a line of its own), or nothing when sign-in
    /// is off.
    private static func account(_ user: String?) -> String {
        guard let user else { return "" }
        return "\n  " + DashboardWeb.fill(DashboardWeb.account, ["user": HTMLText.escape(user)])
    }
}
