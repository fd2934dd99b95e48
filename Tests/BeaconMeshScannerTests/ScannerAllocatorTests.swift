import Testing

@testable import BeaconMeshScanner

@Suite("Scanner allocator")
struct ScannerAllocatorTests {
    @Test("glibc takes every setting: one arena, heap blocks up to the limit glibc allows (32 MiB), the free top kept")
    func settingsAccepted() {
        #expect(ScannerAllocator.heapBlockLimit <= 32 << 20, "glibc refuses a mapping threshold above half its 64 MiB heaps")
        #expect(ScannerAllocator.keptFreeBytes >= ScannerAllocator.heapBlockLimit, "a freed batch must not be given back at once")
        #expect(ScannerAllocator.configure())
    }
}
