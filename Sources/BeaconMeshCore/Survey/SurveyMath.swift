/// The few numeric routines a survey needs, in pure Swift (Core links no C math library): exp, log, and solving
/// with a symmetric positive-definite matrix.
public enum SurveyMath {
    /// e^x, accurate to about 1e-13 relative over the range a fit uses; no division, no branch and no call (it runs
    /// several times per decision of a surveyed store, and a loop of them can be vectorised).
    @inlinable
    public static func exp(_ x: Double) -> Double {
        // Below -708 the result is (nearly) subnormal: taken as e^-708 ≈ 3e-308, which is 0 next to any probability.
        let x = min(max(x, -708), 709)
        // e^x = 2^k · e^r with |r| ≤ ln 2 / 2. Adding 1.5 · 2^52 rounds x / ln 2 to the nearest integer k and leaves
        // k in the low bits; 2^k is then built from its bits (k + 1023 is its biased exponent).
        let shifted = x * 1.442_695_040_888_963_4 + 6_755_399_441_055_744
        let k = shifted - 6_755_399_441_055_744
        let r = x - k * 0.693_147_180_559_945_3
        let twoToK = Double(bitPattern: (shifted.bitPattern &+ 1023) &<< 52)
        // e^r by its Taylor series to r^12 / 12! (< 1e-14 there), Horner's way.
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
        return sum * twoToK
    }

    /// The natural logarithm of `x` (> 0).
    @inlinable
    public static func log(_ x: Double) -> Double {
        guard x > 0 else { return -.infinity }
        guard x.isFinite else { return x }
        // x = m · 2^e with m in [√½, √2): ln x = e ln 2 + ln m, ln m = 2 atanh(s), s = (m − 1) / (m + 1) within
        // ±0.172, whose series to s^21 / 21 is within 1e-16.
        let high = x.significand > 1.414_213_562_373_095_1
        let e = Double(x.exponent) + (high ? 1 : 0)
        let m = high ? x.significand * 0.5 : x.significand
        let s = (m - 1) / (m + 1)
        let s2 = s * s
        var sum = 1.0 / 21
        sum = sum * s2 + 1.0 / 19
        sum = sum * s2 + 1.0 / 17
        sum = sum * s2 + 1.0 / 15
        sum = sum * s2 + 1.0 / 13
        sum = sum * s2 + 1.0 / 11
        sum = sum * s2 + 1.0 / 9
        sum = sum * s2 + 1.0 / 7
        sum = sum * s2 + 1.0 / 5
        sum = sum * s2 + 1.0 / 3
        sum = sum * s2 + 1
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
