/// The sign-in form at `/login` (`Web/login.html`): name and password, posted back to `/login` with the page to return to. Everything
/// put into it (the name typed, the message, the page to return to) is escaped.
public enum LoginPage {
    /// The form; `message` (a wrong password, too many tries) is shown above it, `name` is filled in again.
    public static func html(next: String, name: String = "", message: String? = nil) -> String {
        let notice = message.map { #"<p id="login-message" class="problem" role="alert">\#(HTMLText.escape($0))</p>"# } ?? ""
        return DashboardWeb.fill(
            DashboardWeb.login, ["notice": notice, "next": HTMLText.escape(next), "name": HTMLText.escape(name)])
    }
}
