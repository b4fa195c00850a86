//go:build unix

package executive

import (
	"syscall"
	"unsafe"
)

// slotMemory returns n zeroed entries in anonymous memory mapped outside the Go heap (cachedFacts
// holds no pointers, so the collector never needs to see them), and the function that unmaps
// it. Where the mapping fails it falls back to the heap.
func slotMemory(n int) ([]cachedFacts, func()) {
	size := n * int(unsafe.Sizeof(cachedFacts{}))
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]cachedFacts, n), nil
	}
	return unsafe.Slice((*cachedFacts)(unsafe.Pointer(&mem[0])), n), func() { _ = syscall.Munmap(mem) }
}
