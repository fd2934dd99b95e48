/// The few numeric routines a survey needs, in pure Swift (Core links no C math library): exp, log, and solving
/// with a symmetric positive-definite matrix.
public enum SurveyMath {
    /// e^x, accurate to about 1e-12 relative over the range a fit uses.
    @inlinable
    public static func exp(_ x: Double) -> Double {
        if x < -700 { return 0 }
        if x > 700 { return .infinity }
        // e^x = 2^k · e^r with |r| ≤ ln 2 / 2; the series converges fast for r.
        let ln2 = 0.693_147_180_559_945_3
        let k = (x / ln2).rounded()
        let r = x - k * ln2
        var term = 1.0
        var sum = 1.0
        for n in 1...14 {
            term *= r / Double(n)
            sum += term
        }
        return sum * Double(sign: .plus, exponent: Int(k), significand: 1)
    }

    /// The natural logarithm of `x` (> 0).
    public static func log(_ x: Double) -> Double {
        guard x > 0 else { return -.infinity }
        guard x.isFinite else { return x }
        // x = m · 2^e with m in [1, 2): ln x = e ln 2 + ln m, ln m by the atanh series.
        let e = Double(x.exponent)
        let m = x.significand
        let s = (m - 1) / (m + 1)
        let s2 = s * s
        var term = s
        var sum = 0.0
        var n = 1.0
        while n < 60 {
            sum += term / n
            term *= s2
            n += 2
        }
        return e * 0.693_147_180_559_945_3 + 2 * sum
    }

    /// The inverse of the symmetric positive-definite `n × n` matrix `matrix` (row by row), by Cholesky
    /// factorisation; `nil` when it is not positive definite.
    public static func inverseOfPositiveDefinite(_ matrix: [Double], size n: Int) -> [Double]? {
        var lower = [Double](repeating: 0, count: n * n)
        for row in 0..<n {
            for column in 0...row {
                var sum = matrix[row * n + column]
                for k in 0..<column { sum -= lower[row * n + k] * lower[column * n + k] }
                if row == column {
                    guard sum > 1e-12 else { return nil }
                    lower[row * n + row] = sum.squareRoot()
                } else {
                    lower[row * n + column] = sum / lower[column * n + column]
                }
            }
        }
        // Invert the factor, then inverse = L⁻ᵀ L⁻¹.
        var inverseLower = [Double](repeating: 0, count: n * n)
        for column in 0..<n {
            inverseLower[column * n + column] = 1 / lower[column * n + column]
            for row in (column + 1)..<max(column + 1, n) {
                var sum = 0.0
                for k in column..<row { sum -= lower[row * n + k] * inverseLower[k * n + column] }
                inverseLower[row * n + column] = sum / lower[row * n + row]
            }
        }
        var inverse = [Double](repeating: 0, count: n * n)
        for row in 0..<n {
            for column in 0...row {
                var sum = 0.0
                for k in row..<n { sum += inverseLower[k * n + row] * inverseLower[k * n + column] }
                inverse[row * n + column] = sum
                inverse[column * n + row] = sum
            }
        }
        return inverse
    }
}
