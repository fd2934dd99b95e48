/// The pages' script: follows the page's server-sent event stream and renders each message into the skeleton.
///
/// It keeps rows and photos across messages (a row is updated in place, a photo sent once is kept), highlights a
/// new arrival for 1.5 s, ticks "time in store" every second with the server's clock, and calls its data stale —
/// greyed, said on the status line — when the stream is down, nothing came for 12 s (the server wakes every 5 s),
/// the dashboard lost the broker, or the store went quiet. `EventSource` reconnects by itself; should the browser
/// give up (an HTTP error), the script opens a new one after 2 s, or sends the browser to `/login` when the dashboard
/// says the session ended (401). Data is only ever set as text, never as HTML.
public enum DashboardScript {
    /// `Web/dashboard.js`.
    public static var text: String { DashboardWeb.script }
}
