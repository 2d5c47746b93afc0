package primproc

import "unsafe"

// castSlice views b's bytes as a slice of T (b must be aligned for T, as Arrow buffers are).
func castSlice[T int32 | int64](b []byte) []T {
	var zero T
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/int(unsafe.Sizeof(zero)))
}

func unsafeSizeof[T int32 | int64](v T) uintptr { return unsafe.Sizeof(v) }
