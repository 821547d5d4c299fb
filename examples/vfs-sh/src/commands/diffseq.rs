//! The edit script GNU diff computes, so that `diff`'s output is GNU's
//! line for line where several scripts are equally short (which of two
//! blank lines or `}` lines stays unchanged, where a run of changes
//! starts). Written after diffutils 3.8 (`io.c`, `analyze.c`) and gnulib's
//! `diffseq.h`; no crate reproduces their choices:
//!
//! 1. Lines identical at both ends are set aside (`find_identical_ends`),
//!    keeping `horizon` of them (the context of `-u`/`-c`).
//! 2. Lines are numbered by equivalence class (equal keys: after `-i`,
//!    `-w`, `-b`); a last line without a newline equals only the other
//!    file's (unless white space is ignored).
//! 3. Lines that match nothing in the other file, and runs of lines that
//!    match very many, are taken out before the search and marked
//!    changed (`discard_confusing_lines`).
//! 4. Myers' O(ND) search from both ends for a middle snake, splitting
//!    the problem there (`diag`, `compareseq`), giving up halfway when a
//!    part costs more than about the square root of its size.
//! 5. Runs of changes slide over equal lines to merge with their
//!    neighbours and line up with the other file's (`shift_boundaries`).

use similar::DiffOp;

/// One side's lines as the script needs them.
pub(crate) struct Side<'a> {
    /// The lines as read, for the identical ends.
    pub(crate) raw: &'a [String],
    /// The lines as compared (case and white space folded as asked).
    pub(crate) keys: &'a [String],
    /// The last line has no newline.
    pub(crate) open: bool,
}

impl Side<'_> {
    /// Line `i` as the identical-ends scan compares it: its bytes and
    /// whether it ends with a newline.
    fn raw_line(&self, i: usize) -> (&str, bool) {
        (&self.raw[i], self.open && i + 1 == self.raw.len())
    }
}

/// The edit script from `a` to `b`, as GNU diff finds it. `horizon`: the
/// lines of context kept around the changes (GNU's `horizon_lines`);
/// `exact_last`: a last line without a newline equals only the other
/// file's such line (no white space is ignored); `minimal`: `-d`.
pub(crate) fn script(
    a: &Side<'_>,
    b: &Side<'_>,
    horizon: usize,
    exact_last: bool,
    minimal: bool,
) -> Vec<DiffOp> {
    let (la, lb) = (a.raw.len(), b.raw.len());
    // 1. The identical ends, less the horizon kept in the buffer.
    let prefix = (0..la.min(lb))
        .take_while(|&i| a.raw_line(i) == b.raw_line(i))
        .count();
    let start = prefix - prefix.min(horizon);
    let suffix = (1..=la.min(lb) - start)
        .take_while(|&k| a.raw_line(la - k) == b.raw_line(lb - k))
        .count();
    let kept = suffix - suffix.min(horizon);
    let (end_a, end_b) = (la - kept, lb - kept);

    // 2. Equivalence classes, numbered from 1.
    let mut classes = std::collections::HashMap::new();
    let mut class_of = |side: &Side<'_>, i: usize| -> usize {
        let open = exact_last && side.open && i + 1 == side.raw.len();
        let next = classes.len() + 1;
        *classes.entry((side.keys[i].clone(), open)).or_insert(next)
    };
    let ea: Vec<usize> = (start..end_a).map(|i| class_of(a, i)).collect();
    let eb: Vec<usize> = (start..end_b).map(|i| class_of(b, i)).collect();
    let nclasses = classes.len() + 1;

    // 3.-5.
    let mut changed = [vec![false; ea.len() + 2], vec![false; eb.len() + 2]];
    let equivs = [ea, eb];
    let (undiscarded, real) = discard_confusing_lines(&equivs, &mut changed, nclasses, minimal);
    let mut search = Search::new(&undiscarded, &real, &mut changed);
    search.compareseq(
        0,
        undiscarded[0].len() as isize,
        0,
        undiscarded[1].len() as isize,
        minimal,
    );
    shift_boundaries(&equivs, &mut changed);

    ops(&changed, start, (la, lb))
}

/// The operations for the changed flags of the buffered lines (which
/// start at line `start` of both files), over whole files of `len` lines:
/// each run of changed lines in either file at the same point is one
/// operation (`build_script`), and the lines between are equal.
fn ops(changed: &[Vec<bool>; 2], start: usize, len: (usize, usize)) -> Vec<DiffOp> {
    let is = |f: usize, i: usize| changed[f].get(i + 1).copied().unwrap_or(false);
    let (n0, n1) = (changed[0].len() - 2, changed[1].len() - 2);
    let mut out = Vec::new();
    // Where the lines after the last operation start, in both files.
    let mut pos = (0, 0);
    let (mut i0, mut i1) = (0, 0);
    while i0 < n0 || i1 < n1 {
        if is(0, i0) || is(1, i1) {
            let (l0, l1) = (i0, i1);
            while is(0, i0) {
                i0 += 1;
            }
            while is(1, i1) {
                i1 += 1;
            }
            let (old_index, new_index) = (l0 + start, l1 + start);
            if old_index > pos.0 {
                out.push(DiffOp::Equal {
                    old_index: pos.0,
                    new_index: pos.1,
                    len: old_index - pos.0,
                });
            }
            let (old_len, new_len) = (i0 - l0, i1 - l1);
            out.push(match (old_len, new_len) {
                (_, 0) => DiffOp::Delete {
                    old_index,
                    old_len,
                    new_index,
                },
                (0, _) => DiffOp::Insert {
                    old_index,
                    new_index,
                    new_len,
                },
                _ => DiffOp::Replace {
                    old_index,
                    old_len,
                    new_index,
                    new_len,
                },
            });
            pos = (i0 + start, i1 + start);
        }
        i0 += 1;
        i1 += 1;
    }
    if len.0 > pos.0 {
        out.push(DiffOp::Equal {
            old_index: pos.0,
            new_index: pos.1,
            len: len.0 - pos.0,
        });
    }
    out
}

/// Takes out lines that match nothing in the other file, and those in
/// the middle of runs of such lines that match very many, marking them
/// changed; returns each side's remaining classes and their line numbers.
fn discard_confusing_lines(
    equivs: &[Vec<usize>; 2],
    changed: &mut [Vec<bool>; 2],
    nclasses: usize,
    minimal: bool,
) -> ([Vec<usize>; 2], [Vec<usize>; 2]) {
    let mut counts = [vec![0usize; nclasses], vec![0usize; nclasses]];
    for f in 0..2 {
        for &e in &equivs[f] {
            counts[f][e] += 1;
        }
    }
    // 0 keep, 1 discard, 2 discard provisionally.
    let mut discards = [vec![0u8; equivs[0].len()], vec![0u8; equivs[1].len()]];
    for f in 0..2 {
        let end = equivs[f].len();
        let mut many = 5usize;
        let mut tem = end / 64;
        loop {
            tem >>= 2;
            if tem == 0 {
                break;
            }
            many *= 2;
        }
        for i in 0..end {
            let nmatch = counts[1 - f][equivs[f][i]];
            if nmatch == 0 {
                discards[f][i] = 1;
            } else if nmatch > many {
                discards[f][i] = 2;
            }
        }
    }
    for d in &mut discards {
        let end = d.len();
        let mut i = 0;
        while i < end {
            if d[i] == 2 {
                d[i] = 0;
            } else if d[i] != 0 {
                // A run of discardable lines from here.
                let mut j = i;
                let mut provisional = 0;
                while j < end && d[j] != 0 {
                    if d[j] == 2 {
                        provisional += 1;
                    }
                    j += 1;
                }
                while j > i && d[j - 1] == 2 {
                    j -= 1;
                    d[j] = 0;
                    provisional -= 1;
                }
                let length = j - i;
                if provisional * 4 > length {
                    while j > i {
                        j -= 1;
                        if d[j] == 2 {
                            d[j] = 0;
                        }
                    }
                } else {
                    let mut minimum = 1usize;
                    let mut tem = length >> 2;
                    loop {
                        tem >>= 2;
                        if tem == 0 {
                            break;
                        }
                        minimum <<= 1;
                    }
                    minimum += 1;
                    // Cancel any subrun of `minimum` or more provisionals.
                    let (mut j, mut consec) = (0usize, 0usize);
                    while j < length {
                        if d[i + j] != 2 {
                            consec = 0;
                        } else {
                            consec += 1;
                            if minimum == consec {
                                j -= consec;
                            } else if minimum < consec {
                                d[i + j] = 0;
                            }
                        }
                        j += 1;
                    }
                    // From the start of the run until three real discards
                    // in a row (or one at least 8 lines in), and the same
                    // from its end, provisionals are kept.
                    let (mut j, mut consec) = (0, 0);
                    while j < length {
                        if j >= 8 && d[i + j] == 1 {
                            break;
                        }
                        if d[i + j] == 2 {
                            consec = 0;
                            d[i + j] = 0;
                        } else if d[i + j] == 0 {
                            consec = 0;
                        } else {
                            consec += 1;
                        }
                        if consec == 3 {
                            break;
                        }
                        j += 1;
                    }
                    i += length - 1;
                    let (mut j, mut consec) = (0, 0);
                    while j < length {
                        if j >= 8 && d[i - j] == 1 {
                            break;
                        }
                        if d[i - j] == 2 {
                            consec = 0;
                            d[i - j] = 0;
                        } else if d[i - j] == 0 {
                            consec = 0;
                        } else {
                            consec += 1;
                        }
                        if consec == 3 {
                            break;
                        }
                        j += 1;
                    }
                }
            }
            i += 1;
        }
    }
    let mut undiscarded = [Vec::new(), Vec::new()];
    let mut real = [Vec::new(), Vec::new()];
    for f in 0..2 {
        for (i, &e) in equivs[f].iter().enumerate() {
            if minimal || discards[f][i] == 0 {
                undiscarded[f].push(e);
                real[f].push(i);
            } else {
                changed[f][i + 1] = true;
            }
        }
    }
    (undiscarded, real)
}

/// Where `diag` splits a problem, and whether each half must be minimal.
struct Partition {
    xmid: isize,
    ymid: isize,
    lo_minimal: bool,
    hi_minimal: bool,
}

/// The middle-snake search over the undiscarded lines (`diffseq.h`).
struct Search<'a> {
    x: &'a [usize],
    y: &'a [usize],
    real: &'a [Vec<usize>; 2],
    changed: &'a mut [Vec<bool>; 2],
    /// The furthest x reached on each diagonal, forward and backward,
    /// indexed by diagonal + `off`.
    fd: Vec<isize>,
    bd: Vec<isize>,
    off: isize,
    too_expensive: isize,
}

impl<'a> Search<'a> {
    fn new(
        v: &'a [Vec<usize>; 2],
        real: &'a [Vec<usize>; 2],
        changed: &'a mut [Vec<bool>; 2],
    ) -> Self {
        let diags = v[0].len() + v[1].len() + 3;
        // About the square root of the input size, at least 4096.
        let mut too_expensive = 1isize;
        let mut d = diags;
        while d != 0 {
            too_expensive <<= 1;
            d >>= 2;
        }
        Search {
            x: &v[0],
            y: &v[1],
            real,
            changed,
            fd: vec![0; diags],
            bd: vec![0; diags],
            off: v[1].len() as isize + 1,
            too_expensive: too_expensive.max(4096),
        }
    }

    fn eq(&self, x: isize, y: isize) -> bool {
        self.x[x as usize] == self.y[y as usize]
    }

    fn fd(&mut self, d: isize) -> &mut isize {
        &mut self.fd[(d + self.off) as usize]
    }

    fn bd(&mut self, d: isize) -> &mut isize {
        &mut self.bd[(d + self.off) as usize]
    }

    /// Finds the midpoint of the shortest edit script for the part
    /// `[xoff, xlim) x [yoff, ylim)`.
    fn diag(
        &mut self,
        xoff: isize,
        xlim: isize,
        yoff: isize,
        ylim: isize,
        find_minimal: bool,
    ) -> Partition {
        let dmin = xoff - ylim;
        let dmax = xlim - yoff;
        let fmid = xoff - yoff;
        let bmid = xlim - ylim;
        let (mut fmin, mut fmax) = (fmid, fmid);
        let (mut bmin, mut bmax) = (bmid, bmid);
        let odd = (fmid - bmid) & 1 != 0;
        *self.fd(fmid) = xoff;
        *self.bd(bmid) = xlim;
        let mut c = 1isize;
        loop {
            // Extend the top-down search by an edit step on each diagonal.
            if fmin > dmin {
                fmin -= 1;
                *self.fd(fmin - 1) = -1;
            } else {
                fmin += 1;
            }
            if fmax < dmax {
                fmax += 1;
                *self.fd(fmax + 1) = -1;
            } else {
                fmax -= 1;
            }
            let mut d = fmax;
            while d >= fmin {
                let (tlo, thi) = (*self.fd(d - 1), *self.fd(d + 1));
                let x0 = if tlo < thi { thi } else { tlo + 1 };
                let (mut x, mut y) = (x0, x0 - d);
                while x < xlim && y < ylim && self.eq(x, y) {
                    x += 1;
                    y += 1;
                }
                *self.fd(d) = x;
                if odd && bmin <= d && d <= bmax && *self.bd(d) <= x {
                    return Partition {
                        xmid: x,
                        ymid: y,
                        lo_minimal: true,
                        hi_minimal: true,
                    };
                }
                d -= 2;
            }
            // And the bottom-up search.
            if bmin > dmin {
                bmin -= 1;
                *self.bd(bmin - 1) = isize::MAX;
            } else {
                bmin += 1;
            }
            if bmax < dmax {
                bmax += 1;
                *self.bd(bmax + 1) = isize::MAX;
            } else {
                bmax -= 1;
            }
            let mut d = bmax;
            while d >= bmin {
                let (tlo, thi) = (*self.bd(d - 1), *self.bd(d + 1));
                let x0 = if tlo < thi { tlo } else { thi - 1 };
                let (mut x, mut y) = (x0, x0 - d);
                while xoff < x && yoff < y && self.eq(x - 1, y - 1) {
                    x -= 1;
                    y -= 1;
                }
                *self.bd(d) = x;
                if !odd && fmin <= d && d <= fmax && x <= *self.fd(d) {
                    return Partition {
                        xmid: x,
                        ymid: y,
                        lo_minimal: true,
                        hi_minimal: true,
                    };
                }
                d -= 2;
            }
            if !find_minimal && c >= self.too_expensive {
                return self.halfway(xoff, xlim, yoff, ylim, (fmin, fmax), (bmin, bmax));
            }
            c += 1;
        }
    }

    /// Gives up on an expensive part: the better of the furthest forward
    /// and backward points reached.
    fn halfway(
        &mut self,
        xoff: isize,
        xlim: isize,
        yoff: isize,
        ylim: isize,
        (fmin, fmax): (isize, isize),
        (bmin, bmax): (isize, isize),
    ) -> Partition {
        let (mut fxybest, mut fxbest) = (-1, 0);
        let mut d = fmax;
        while d >= fmin {
            let mut x = (*self.fd(d)).min(xlim);
            let mut y = x - d;
            if ylim < y {
                x = ylim + d;
                y = ylim;
            }
            if fxybest < x + y {
                fxybest = x + y;
                fxbest = x;
            }
            d -= 2;
        }
        let (mut bxybest, mut bxbest) = (isize::MAX, 0);
        let mut d = bmax;
        while d >= bmin {
            let mut x = (*self.bd(d)).max(xoff);
            let mut y = x - d;
            if y < yoff {
                x = yoff + d;
                y = yoff;
            }
            if x + y < bxybest {
                bxybest = x + y;
                bxbest = x;
            }
            d -= 2;
        }
        if (xlim + ylim) - bxybest < fxybest - (xoff + yoff) {
            Partition {
                xmid: fxbest,
                ymid: fxybest - fxbest,
                lo_minimal: true,
                hi_minimal: false,
            }
        } else {
            Partition {
                xmid: bxbest,
                ymid: bxybest - bxbest,
                lo_minimal: false,
                hi_minimal: true,
            }
        }
    }

    fn delete(&mut self, x: isize) {
        let i = self.real[0][x as usize];
        self.changed[0][i + 1] = true;
    }

    fn insert(&mut self, y: isize) {
        let i = self.real[1][y as usize];
        self.changed[1][i + 1] = true;
    }

    /// Marks the changes between `[xoff, xlim)` and `[yoff, ylim)`.
    fn compareseq(
        &mut self,
        mut xoff: isize,
        mut xlim: isize,
        mut yoff: isize,
        mut ylim: isize,
        mut find_minimal: bool,
    ) {
        loop {
            while xoff < xlim && yoff < ylim && self.eq(xoff, yoff) {
                xoff += 1;
                yoff += 1;
            }
            while xoff < xlim && yoff < ylim && self.eq(xlim - 1, ylim - 1) {
                xlim -= 1;
                ylim -= 1;
            }
            if xoff == xlim {
                for y in yoff..ylim {
                    self.insert(y);
                }
                return;
            }
            if yoff == ylim {
                for x in xoff..xlim {
                    self.delete(x);
                }
                return;
            }
            let part = self.diag(xoff, xlim, yoff, ylim, find_minimal);
            // The smaller half first (the order does not change the
            // result), then the other in this loop.
            let second_smaller =
                (xlim + ylim) - (part.xmid + part.ymid) < (part.xmid + part.ymid) - (xoff + yoff);
            if second_smaller {
                self.compareseq(part.xmid, xlim, part.ymid, ylim, part.hi_minimal);
                xlim = part.xmid;
                ylim = part.ymid;
                find_minimal = part.lo_minimal;
            } else {
                self.compareseq(xoff, part.xmid, yoff, part.ymid, part.lo_minimal);
                xoff = part.xmid;
                yoff = part.ymid;
                find_minimal = part.hi_minimal;
            }
        }
    }
}

/// Slides each run of changes over equal lines so that it joins the
/// runs around it, and else lines up with a run in the other file
/// (`shift_boundaries`). `changed` has a `false` before and after each
/// side's lines.
fn shift_boundaries(equivs: &[Vec<usize>; 2], changed: &mut [Vec<bool>; 2]) {
    for (f, eq) in equivs.iter().enumerate() {
        let [c0, c1] = changed;
        let (ch, other) = if f == 0 { (c0, &*c1) } else { (c1, &*c0) };
        // Indices are lines; `ch[i + 1]` is line i's flag.
        let c = |v: &Vec<bool>, i: isize| v[(i + 1) as usize];
        let i_end = eq.len() as isize;
        let (mut i, mut j) = (0isize, 0isize);
        loop {
            while i < i_end && !c(ch, i) {
                loop {
                    let v = c(other, j);
                    j += 1;
                    if !v {
                        break;
                    }
                }
                i += 1;
            }
            if i == i_end {
                break;
            }
            let mut start = i;
            loop {
                i += 1;
                if !c(ch, i) {
                    break;
                }
            }
            while c(other, j) {
                j += 1;
            }
            let mut corresponding;
            loop {
                let runlength = i - start;
                // Back, merging with earlier runs.
                while start > 0 && eq[(start - 1) as usize] == eq[(i - 1) as usize] {
                    start -= 1;
                    ch[(start + 1) as usize] = true;
                    i -= 1;
                    ch[(i + 1) as usize] = false;
                    while c(ch, start - 1) {
                        start -= 1;
                    }
                    loop {
                        j -= 1;
                        if !c(other, j) {
                            break;
                        }
                    }
                }
                corresponding = if c(other, j - 1) { i } else { i_end };
                // Forward, merging with later runs.
                while i != i_end && eq[start as usize] == eq[i as usize] {
                    ch[(start + 1) as usize] = false;
                    start += 1;
                    ch[(i + 1) as usize] = true;
                    i += 1;
                    while c(ch, i) {
                        i += 1;
                    }
                    loop {
                        j += 1;
                        if !c(other, j) {
                            break;
                        }
                        corresponding = i;
                    }
                }
                if runlength == i - start {
                    break;
                }
            }
            // Back again to a run of the other file's, if there is one.
            while corresponding < i {
                start -= 1;
                ch[(start + 1) as usize] = true;
                i -= 1;
                ch[(i + 1) as usize] = false;
                loop {
                    j -= 1;
                    if !c(other, j) {
                        break;
                    }
                }
            }
        }
    }
}
