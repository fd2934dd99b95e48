/// The pages' stylesheet: one column on a phone (the members table becomes cards), two columns from tablet width,
/// larger type on a wall display; new arrivals glow for 1.5 s; stale data is greyed and says so.
public enum DashboardStylesheet {
    /// `Web/dashboard.css`.
    public static var text: String { DashboardWeb.stylesheet }
}
