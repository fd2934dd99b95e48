import CMalloc

/// Sets glibc's allocator up for a scanner: one arena, and blocks of up to `heapBlockLimit` served from the heap and
/// kept there once freed (up to `keptFreeBytes`), so that the next batch reuses the same pages.
///
/// With thousands of beacons in view a scanner makes, twice a second, a batch of most of a megabyte several times
/// over (the sightings, their JSON, libmosquitto's copies) and frees it again. By default glibc maps each such block
/// afresh or gives the heap's top back to the kernel after it, so every batch faulted in and zeroed its pages again
/// (a fifth of the scanner's CPU replaying a capture of 5,000 beacons), and the loop's task, moving between threads,
/// spread its blocks over several arenas. Peak memory stays the same: the pages kept are the ones the last batch used.
public enum ScannerAllocator {
    /// Blocks up to this size come from the heap, not from a mapping of their own.
    public static let heapBlockLimit = 8 << 20
    /// Free memory at the heap's top kept for the next blocks rather than given back to the kernel.
    public static let keptFreeBytes = 16 << 20

    /// Applies the settings (call it first thing in `main`, before threads start); `false` if glibc refused one.
    @discardableResult
    public static func configure() -> Bool {
        let arenas = mallopt(M_ARENA_MAX, 1)
        let mapping = mallopt(M_MMAP_THRESHOLD, Int32(heapBlockLimit))
        let trimming = mallopt(M_TRIM_THRESHOLD, Int32(keptFreeBytes))
        return arenas == 1 && mapping == 1 && trimming == 1
    }
}
