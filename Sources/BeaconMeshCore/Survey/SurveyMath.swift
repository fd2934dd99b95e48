/// The few numeric routines a survey needs, in pure Swift (Core links no C math library): exp, log, and solving
/// with a symmetric positive-definite matrix.
public enum SurveyMath {
    /// e^x, accurate to about 1e-13 relative over the range a fit uses; no division (it runs several times per
    /// decision of a surveyed store).
    @inlinable
    public static func exp(_ x: Double) -> Double {
        if x < -700 { return 0 }
        if x > 700 { return .infinity }
        // e^x = 2^k · e^r with |r| ≤ ln 2 / 2; e^r by its Taylor series to r^12 / 12! (< 1e-14 there), Horner's way.
        let k = (x * 1.442_695_040_888_963_4).rounded()
        let r = x - k * 0.693_147_180_559_945_3
        var sum = 1.0 / 479_001_600
        sum = sum * r + 1.0 / 39_916_800
        sum = sum * r + 1.0 / 3_628_800
        sum = sum * r + 1.0 / 362_880
        sum = sum * r + 1.0 / 40_320
        sum = sum * r + 1.0 / 5_040
        sum = sum * r + 1.0 / 720
        sum = sum * r + 1.0 / 120
        sum = sum * r + 1.0 / 24
        sum = sum * r + 1.0 / 6
        sum = sum * r + 0.5
        sum = sum * r + 1
        sum = sum * r + 1
        return sum * Double(sign: .plus, exponent: Int(k), significand: 1)
    }

    /// The natural logarithm of `x` (> 0).
    @inlinable
    public static func log(_ x: Double) -> Double {
        guard x > 0 else { return -.infinity }
        guard x.isFinite else { return x }
        // x = m · 2^e with m in [1, 2): ln x = e ln 2 + ln m, ln m = 2 atanh(s), s = (m − 1) / (m + 1) ≤ 1/3, whose
        // series to s^31 / 31 is within 1e-16.
        let e = Double(x.exponent)
        let m = x.significand
        let s = (m - 1) / (m + 1)
        let s2 = s * s
        var sum = 1.0 / 31
        var n = 29.0
        while n >= 1 {
            sum = sum * s2 + 1 / n
            n -= 2
        }
        return e * 0.693_147_180_559_945_3 + 2 * s * sum
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
