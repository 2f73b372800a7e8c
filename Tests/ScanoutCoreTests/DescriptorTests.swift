import Testing
import ScanoutCore
#if canImport(Glibc)
import Glibc
#endif

private func isOpen(_ fd: Int32) -> Bool { fcntl(fd, F_GETFD) >= 0 }

@Suite("owned and borrowed descriptors, DMA-BUF planes")
struct DescriptorTests {
    @Test("an owned descriptor is closed once, when its object goes; what it lends is the same number")
    func ownedIsClosedWhenItGoes() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[1]) }
        var owner: OwnedDescriptor? = OwnedDescriptor(taking: ends[0])
        let lent = try #require(owner).borrowed
        #expect(lent.rawValue == ends[0] && isOpen(ends[0]))
        owner = nil
        #expect(!isOpen(ends[0]))
    }

    @Test("a duplicate is another descriptor of the same file, open after the original goes")
    func duplicateOutlivesTheOriginal() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        var original: OwnedDescriptor? = OwnedDescriptor(taking: ends[1])
        let copy = try #require(original?.duplicate())
        #expect(copy.rawValue != ends[1])
        #expect(fcntl(copy.rawValue, F_GETFD) & FD_CLOEXEC != 0)
        original = nil
        #expect(!isOpen(ends[1]) && isOpen(copy.rawValue))
        // The copy still writes into the pipe the original was made on.
        var byte: UInt8 = 42
        #expect(write(copy.rawValue, &byte, 1) == 1)
        var got: UInt8 = 0
        #expect(read(ends[0], &got, 1) == 1 && got == 42)
        close(ends[0])
    }

    @Test("planes compare by buffer, offset and pitch; a borrowed descriptor is a value")
    func planesAreValues() {
        let a = DMABufPlane(buffer: BorrowedDescriptor(7), offset: 0, pitch: 64)
        #expect(a == DMABufPlane(buffer: BorrowedDescriptor(7), pitch: 64))
        #expect(a != DMABufPlane(buffer: BorrowedDescriptor(8), pitch: 64))
        #expect(a != DMABufPlane(buffer: BorrowedDescriptor(7), offset: 4096, pitch: 64))
        #expect(Set([BorrowedDescriptor(7), BorrowedDescriptor(7), BorrowedDescriptor(9)]).count == 2)
        #expect("\(a.buffer)" == "fd 7")
    }
}
