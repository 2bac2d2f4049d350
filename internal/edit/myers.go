package edit

// costBudget bounds the work of one bisection, in diagonal steps times
// sequence length. Beyond it the block is reported as removed and added
// whole: still a correct diff, just not the shortest, and it keeps
// pathological inputs from taking seconds.
const costBudget = 100_000_000

// pair is the indexes of a line kept from a (i) as line of b (j).
type pair struct{ i, j int }

// commonLines returns the pairs of a longest common subsequence of a and b
// (lines hashed to ints below ids), in increasing order, using Myers' O(ND)
// algorithm in its linear-space divide-and-conquer form. Lines that occur on
// one side only cannot be in any common subsequence, so they are set aside
// first; after a typical edit that leaves little for the algorithm to do.
func commonLines(a, b []int, ids int) []pair {
	inA, inB := make([]bool, ids), make([]bool, ids)
	for _, x := range a {
		inA[x] = true
	}
	for _, x := range b {
		inB[x] = true
	}
	fa, ia := keepShared(a, inB)
	fb, ib := keepShared(b, inA)
	d := &differ{a: fa, b: fb, out: make([]pair, 0, min(len(fa), len(fb)))}
	d.compare(0, len(fa), 0, len(fb))
	for k, p := range d.out {
		d.out[k] = pair{ia[p.i], ib[p.j]}
	}
	return d.out
}

// keepShared returns the values of s found in other, with their indexes.
func keepShared(s []int, other []bool) (vals, idx []int) {
	for i, x := range s {
		if other[x] {
			vals = append(vals, x)
			idx = append(idx, i)
		}
	}
	return vals, idx
}

type differ struct {
	a, b []int
	out  []pair
}

// compare appends the common pairs of a[alo:ahi] and b[blo:bhi].
func (d *differ) compare(alo, ahi, blo, bhi int) {
	for alo < ahi && blo < bhi && d.a[alo] == d.b[blo] {
		d.out = append(d.out, pair{alo, blo})
		alo, blo = alo+1, blo+1
	}
	endA := ahi
	for alo < ahi && blo < bhi && d.a[ahi-1] == d.b[bhi-1] {
		ahi, bhi = ahi-1, bhi-1
	}
	if alo < ahi && blo < bhi {
		if x, y, ok := d.bisect(alo, ahi, blo, bhi); ok {
			d.compare(alo, x, blo, y)
			d.compare(x, ahi, y, bhi)
		}
	}
	for k := ahi; k < endA; k++ {
		d.out = append(d.out, pair{k, bhi + k - ahi})
	}
}

// bisect finds where a shortest edit script of the block crosses its
// middle, searching from both ends at once, and returns that point to split
// the block. The ends of the block differ, so the point is never a corner.
// ok is false when the block shares nothing or the cost budget runs out.
func (d *differ) bisect(alo, ahi, blo, bhi int) (x, y int, ok bool) {
	n, m := ahi-alo, bhi-blo
	maxD := (n + m + 1) / 2
	limit := min(maxD, max(1000, costBudget/(n+m)))
	off := maxD + 1
	vf := newFrontier(2*maxD + 3)
	vb := newFrontier(2*maxD + 3)
	vf[off+1], vb[off+1] = 0, 0
	delta := n - m
	odd := delta%2 != 0
	// Diagonals that left the grid are trimmed from the ends of the range.
	fStart, fEnd, bStart, bEnd := 0, 0, 0, 0
	for D := 0; D < limit; D++ {
		for k := -D + fStart; k <= D-fEnd; k += 2 {
			x := furthest(vf, off+k, k == -D || (k != D && vf[off+k-1] < vf[off+k+1]))
			y := x - k
			for x < n && y < m && d.a[alo+x] == d.b[blo+y] {
				x, y = x+1, y+1
			}
			vf[off+k] = x
			switch {
			case x > n:
				fEnd += 2
			case y > m:
				fStart += 2
			case odd:
				if kb := off + delta - k; kb >= 0 && kb < len(vb) && vb[kb] >= 0 && x >= n-vb[kb] {
					return alo + x, blo + y, true
				}
			}
		}
		for k := -D + bStart; k <= D-bEnd; k += 2 {
			x := furthest(vb, off+k, k == -D || (k != D && vb[off+k-1] < vb[off+k+1]))
			y := x - k
			for x < n && y < m && d.a[ahi-1-x] == d.b[bhi-1-y] {
				x, y = x+1, y+1
			}
			vb[off+k] = x
			switch {
			case x > n:
				bEnd += 2
			case y > m:
				bStart += 2
			case !odd:
				if kf := off + delta - k; kf >= 0 && kf < len(vf) && vf[kf] >= 0 && vf[kf] >= n-x {
					fx := vf[kf]
					return alo + fx, blo + fx - (kf - off), true
				}
			}
		}
	}
	return 0, 0, false
}

// newFrontier returns a furthest-reaching array with every diagonal unset.
func newFrontier(size int) []int {
	v := make([]int, size)
	for i := range v {
		v[i] = -1
	}
	return v
}

// furthest is the x a path reaches on diagonal k (at index i) before its
// snake: from diagonal k+1 by a step down, or from k-1 by a step right.
func furthest(v []int, i int, down bool) int {
	if down {
		return v[i+1]
	}
	return v[i-1] + 1
}
