package match

// v8TimSort sorts items as V8's Array#sort does (third_party/v8/builtins/array-sort.tq, a port
// of CPython's listsort) with a comparator that is negative when less says so and positive
// otherwise: runs of at least minrun items (the ascending or reversed strictly descending run
// they begin with, extended by a binary insertion sort), merged as the run stack's invariants
// ask, with galloping. For values the comparator orders consistently any stable sort gives the
// same order; for those it does not (null against a string, a number against an array) the
// order follows from exactly these comparisons, in this order, so it is the one Mountebank
// gives.
func v8TimSort(items []sortItem, less func(x, y *sortItem) bool) {
	n := len(items)
	if n < 2 {
		return
	}
	if n < 64 {
		v8SortShort(items, less)
		return
	}
	ts := timSort{a: items, less: less, minGallop: minGallopWins}
	minRun := minRunLength(n)
	low, remaining := 0, n
	for remaining != 0 {
		run := ts.countAndMakeRun(low, low+remaining)
		if run < minRun {
			forced := min(minRun, remaining)
			ts.binaryInsertionSort(low, low+run, low+forced)
			run = forced
		}
		ts.runs = append(ts.runs, tsRun{low, run})
		ts.mergeCollapse()
		low += run
		remaining -= run
	}
	ts.mergeForceCollapse()
}

// minGallopWins is kMinGallopWins: the initial minGallop, and the wins that keep galloping.
const minGallopWins = 7

type tsRun struct{ base, length int }

type timSort struct {
	a         []sortItem
	less      func(x, y *sortItem) bool
	minGallop int
	runs      []tsRun
	tmp       []sortItem
}

// minRunLength is ComputeMinRunLength.
func minRunLength(n int) int {
	r := 0
	for n >= 64 {
		r |= n & 1
		n >>= 1
	}
	return n + r
}

// countAndMakeRun is CountAndMakeRun: the length of the run at low, made ascending.
func (ts *timSort) countAndMakeRun(lowArg, high int) int {
	a := ts.a
	low := lowArg + 1
	if low == high {
		return 1
	}
	run := 2
	descending := ts.less(&a[low], &a[low-1])
	prev := low
	for i := low + 1; i < high; i++ {
		if ts.less(&a[i], &a[prev]) != descending {
			break
		}
		prev = i
		run++
	}
	if descending {
		for i, j := lowArg, lowArg+run-1; i < j; i, j = i+1, j-1 {
			a[i], a[j] = a[j], a[i]
		}
	}
	return run
}

// binaryInsertionSort is BinaryInsertionSort: a[low:startArg] is sorted; extend it to high.
func (ts *timSort) binaryInsertionSort(low, startArg, high int) {
	a := ts.a
	start := startArg
	if low == startArg {
		start++
	}
	for ; start < high; start++ {
		pivot := a[start]
		left, right := low, start
		for left < right {
			mid := left + (right-left)>>1
			if ts.less(&pivot, &a[mid]) {
				right = mid
			} else {
				left = mid + 1
			}
		}
		copy(a[left+1:start+1], a[left:start])
		a[left] = pivot
	}
}

// invariant is RunInvariantEstablished.
func (ts *timSort) invariant(n int) bool {
	if n < 2 {
		return true
	}
	r := ts.runs
	return r[n-2].length > r[n-1].length+r[n].length
}

func (ts *timSort) mergeCollapse() {
	for len(ts.runs) > 1 {
		n := len(ts.runs) - 2
		r := ts.runs
		if !ts.invariant(n+1) || !ts.invariant(n) {
			if r[n-1].length < r[n+1].length {
				n--
			}
			ts.mergeAt(n)
		} else if r[n].length <= r[n+1].length {
			ts.mergeAt(n)
		} else {
			break
		}
	}
}

func (ts *timSort) mergeForceCollapse() {
	for len(ts.runs) > 1 {
		n := len(ts.runs) - 2
		if n > 0 && ts.runs[n-1].length < ts.runs[n+1].length {
			n--
		}
		ts.mergeAt(n)
	}
}

// mergeAt merges runs i and i+1.
func (ts *timSort) mergeAt(i int) {
	baseA, lengthA := ts.runs[i].base, ts.runs[i].length
	baseB, lengthB := ts.runs[i+1].base, ts.runs[i+1].length
	ts.runs[i].length = lengthA + lengthB
	if i == len(ts.runs)-3 {
		ts.runs[i+1] = ts.runs[i+2]
	}
	ts.runs = ts.runs[:len(ts.runs)-1]

	// Where does b start in a? Elements in a before that are in place already.
	k := gallopRight(ts.a, ts.less, &ts.a[baseB], baseA, lengthA, 0)
	baseA += k
	lengthA -= k
	if lengthA == 0 {
		return
	}
	// Where does a end in b? Elements in b after that are in place already.
	lengthB = gallopLeft(ts.a, ts.less, &ts.a[baseA+lengthA-1], baseB, lengthB, lengthB-1)
	if lengthB == 0 {
		return
	}
	if lengthA <= lengthB {
		ts.mergeLow(baseA, lengthA, baseB, lengthB)
	} else {
		ts.mergeHigh(baseA, lengthA, baseB, lengthB)
	}
}

// gallopLeft is GallopLeft: the index in a[base:base+length] where key belongs, the leftmost
// of equal items, starting the search at hint.
func gallopLeft(a []sortItem, less func(x, y *sortItem) bool, key *sortItem, base, length, hint int) int {
	lastOfs, offset := 0, 1
	if less(&a[base+hint], key) {
		// a[hint] < key: gallop right until a[hint+lastOfs] < key <= a[hint+offset].
		maxOfs := length - hint
		for offset < maxOfs {
			if !less(&a[base+hint+offset], key) {
				break
			}
			lastOfs = offset
			offset = offset<<1 + 1
		}
		offset = min(offset, maxOfs)
		lastOfs += hint
		offset += hint
	} else {
		// key <= a[hint]: gallop left until a[hint-offset] < key <= a[hint-lastOfs].
		maxOfs := hint + 1
		for offset < maxOfs {
			if less(&a[base+hint-offset], key) {
				break
			}
			lastOfs = offset
			offset = offset<<1 + 1
		}
		offset = min(offset, maxOfs)
		lastOfs, offset = hint-offset, hint-lastOfs
	}
	lastOfs++
	for lastOfs < offset {
		m := lastOfs + (offset-lastOfs)>>1
		if less(&a[base+m], key) {
			lastOfs = m + 1
		} else {
			offset = m
		}
	}
	return offset
}

// gallopRight is GallopRight: as gallopLeft, the rightmost of equal items.
func gallopRight(a []sortItem, less func(x, y *sortItem) bool, key *sortItem, base, length, hint int) int {
	lastOfs, offset := 0, 1
	if less(key, &a[base+hint]) {
		// key < a[hint]: gallop left until a[hint-offset] <= key < a[hint-lastOfs].
		maxOfs := hint + 1
		for offset < maxOfs {
			if !less(key, &a[base+hint-offset]) {
				break
			}
			lastOfs = offset
			offset = offset<<1 + 1
		}
		offset = min(offset, maxOfs)
		lastOfs, offset = hint-offset, hint-lastOfs
	} else {
		// a[hint] <= key: gallop right until a[hint+lastOfs] <= key < a[hint+offset].
		maxOfs := length - hint
		for offset < maxOfs {
			if less(key, &a[base+hint+offset]) {
				break
			}
			lastOfs = offset
			offset = offset<<1 + 1
		}
		offset = min(offset, maxOfs)
		lastOfs += hint
		offset += hint
	}
	lastOfs++
	for lastOfs < offset {
		m := lastOfs + (offset-lastOfs)>>1
		if less(key, &a[base+m]) {
			offset = m
		} else {
			lastOfs = m + 1
		}
	}
	return offset
}

// mergeLow is MergeLow: merges a[baseA:baseA+lengthA] and the run after it, lengthA <=
// lengthB, copying run A aside.
func (ts *timSort) mergeLow(baseA, lengthA, baseB, lengthB int) {
	a, less := ts.a, ts.less
	tmp := append(ts.tmp[:0], a[baseA:baseA+lengthA]...)
	ts.tmp = tmp
	dest, cursorTemp, cursorB := baseA, 0, baseB
	a[dest] = a[cursorB]
	dest++
	cursorB++
	minGallop := ts.minGallop

	lengthB--
	if lengthB == 0 {
		goto succeed
	}
	if lengthA == 1 {
		goto copyB
	}
	for {
		winsA, winsB := 0, 0
		// Straightforward merge until one run appears to win consistently.
		for {
			if less(&a[cursorB], &tmp[cursorTemp]) {
				a[dest] = a[cursorB]
				dest++
				cursorB++
				winsB++
				lengthB--
				winsA = 0
				if lengthB == 0 {
					goto succeed
				}
				if winsB >= minGallop {
					break
				}
			} else {
				a[dest] = tmp[cursorTemp]
				dest++
				cursorTemp++
				winsA++
				lengthA--
				winsB = 0
				if lengthA == 1 {
					goto copyB
				}
				if winsA >= minGallop {
					break
				}
			}
		}
		// Gallop while either run keeps winning.
		minGallop++
		first := true
		for winsA >= minGallopWins || winsB >= minGallopWins || first {
			first = false
			minGallop = max(1, minGallop-1)
			ts.minGallop = minGallop

			winsA = gallopRight(tmp, less, &a[cursorB], cursorTemp, lengthA, 0)
			if winsA > 0 {
				copy(a[dest:dest+winsA], tmp[cursorTemp:cursorTemp+winsA])
				dest += winsA
				cursorTemp += winsA
				lengthA -= winsA
				if lengthA == 1 {
					goto copyB
				}
				// 0 only when the comparator is not consistent.
				if lengthA == 0 {
					goto succeed
				}
			}
			a[dest] = a[cursorB]
			dest++
			cursorB++
			lengthB--
			if lengthB == 0 {
				goto succeed
			}

			winsB = gallopLeft(a, less, &tmp[cursorTemp], cursorB, lengthB, 0)
			if winsB > 0 {
				copy(a[dest:dest+winsB], a[cursorB:cursorB+winsB])
				dest += winsB
				cursorB += winsB
				lengthB -= winsB
				if lengthB == 0 {
					goto succeed
				}
			}
			a[dest] = tmp[cursorTemp]
			dest++
			cursorTemp++
			lengthA--
			if lengthA == 1 {
				goto copyB
			}
		}
		minGallop++ // penalised for leaving galloping mode
		ts.minGallop = minGallop
	}

succeed:
	if lengthA > 0 {
		copy(a[dest:dest+lengthA], tmp[cursorTemp:cursorTemp+lengthA])
	}
	return
copyB:
	// The last item of run A belongs at the end of the merge.
	copy(a[dest:dest+lengthB], a[cursorB:cursorB+lengthB])
	a[dest+lengthB] = tmp[cursorTemp]
}

// mergeHigh is MergeHigh: merges a[baseA:baseA+lengthA] and the run after it, lengthA >
// lengthB, copying run B aside and merging from the end.
func (ts *timSort) mergeHigh(baseA, lengthA, baseB, lengthB int) {
	a, less := ts.a, ts.less
	tmp := append(ts.tmp[:0], a[baseB:baseB+lengthB]...)
	ts.tmp = tmp
	dest, cursorTemp, cursorA := baseB+lengthB-1, lengthB-1, baseA+lengthA-1
	a[dest] = a[cursorA]
	dest--
	cursorA--
	minGallop := ts.minGallop

	lengthA--
	if lengthA == 0 {
		goto succeed
	}
	if lengthB == 1 {
		goto copyA
	}
	for {
		winsA, winsB := 0, 0
		for {
			if less(&tmp[cursorTemp], &a[cursorA]) {
				a[dest] = a[cursorA]
				dest--
				cursorA--
				winsA++
				lengthA--
				winsB = 0
				if lengthA == 0 {
					goto succeed
				}
				if winsA >= minGallop {
					break
				}
			} else {
				a[dest] = tmp[cursorTemp]
				dest--
				cursorTemp--
				winsB++
				lengthB--
				winsA = 0
				if lengthB == 1 {
					goto copyA
				}
				if winsB >= minGallop {
					break
				}
			}
		}
		minGallop++
		first := true
		for winsA >= minGallopWins || winsB >= minGallopWins || first {
			first = false
			minGallop = max(1, minGallop-1)
			ts.minGallop = minGallop

			k := gallopRight(a, less, &tmp[cursorTemp], baseA, lengthA, lengthA-1)
			winsA = lengthA - k
			if winsA > 0 {
				dest -= winsA
				cursorA -= winsA
				copy(a[dest+1:dest+1+winsA], a[cursorA+1:cursorA+1+winsA])
				lengthA -= winsA
				if lengthA == 0 {
					goto succeed
				}
			}
			a[dest] = tmp[cursorTemp]
			dest--
			cursorTemp--
			lengthB--
			if lengthB == 1 {
				goto copyA
			}

			k = gallopLeft(tmp, less, &a[cursorA], 0, lengthB, lengthB-1)
			winsB = lengthB - k
			if winsB > 0 {
				dest -= winsB
				cursorTemp -= winsB
				copy(a[dest+1:dest+1+winsB], tmp[cursorTemp+1:cursorTemp+1+winsB])
				lengthB -= winsB
				if lengthB == 1 {
					goto copyA
				}
				// 0 only when the comparator is not consistent.
				if lengthB == 0 {
					goto succeed
				}
			}
			a[dest] = a[cursorA]
			dest--
			cursorA--
			lengthA--
			if lengthA == 0 {
				goto succeed
			}
		}
		minGallop++
		ts.minGallop = minGallop
	}

succeed:
	if lengthB > 0 {
		copy(a[dest-(lengthB-1):dest+1], tmp[:lengthB])
	}
	return
copyA:
	// The first item of run B belongs at the front of the merge.
	dest -= lengthA
	cursorA -= lengthA
	copy(a[dest+1:dest+1+lengthA], a[cursorA+1:cursorA+1+lengthA])
	a[dest] = tmp[cursorTemp]
}
