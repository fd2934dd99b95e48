/// The sign-in form at `/login`: name and password, posted back to `/login` with the page to return to. Everything
/// put into it (the name typed, the message, the page to return to) is escaped.
public enum LoginPage {
    /// The form; `message` (a wrong password, too many tries) is shown above it, `name` is filled in again.
    public static func html(next: String, name: String = "", message: String? = nil) -> String {
        let notice = message.map { #"<p id="login-message" class="problem" role="alert">\#(HTMLText.escape($0))</p>"# } ?? ""
        return #"""
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Sign in · BeaconMesh</title>
            <link rel="icon" href="data:,">
            <link rel="stylesheet" href="/assets/dashboard.css">
            </head>
            <body data-page="login">
            <header class="top">
              <div class="brand">BeaconMesh</div>
              <h1 id="title">Sign in</h1>
            </header>
            <main class="login">
              \#(notice)
              <form id="login" method="post" action="/login">
                <input type="hidden" name="next" value="\#(HTMLText.escape(next))">
                <label for="name">Name</label>
                <input id="name" name="name" type="text" autocomplete="username" required autofocus value="\#(HTMLText.escape(name))">
                <label for="password">Password</label>
                <input id="password" name="password" type="password" autocomplete="current-password" required>
                <button id="sign-in" type="submit">Sign in</button>
              </form>
            </main>
            </body>
            </html>

            """#
    }
}
