package exec

// identity returns the rows 0..n-1, kept in *buf for reuse.
func identity(buf *[]int32, n int) []int32 {
	if len(*buf) < n {
		s := make([]int32, max(n, 2*len(*buf)))
		for i := range s {
			s[i] = int32(i)
		}
		*buf = s
	}
	return (*buf)[:n]
}

// activeRows returns a batch's selection, or the identity for a dense batch.
func activeRowsOf(sel []int32, n int, buf *[]int32) []int32 {
	if sel != nil {
		return sel
	}
	return identity(buf, n)
}
