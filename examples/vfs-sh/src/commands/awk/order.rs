//! The order in which gawk's `for (k in a)` visits an array's keys.
//!
//! Agents write `{n[$1]++} END {for (k in n) print k, n[k]}` and read the
//! lines in the order they come; gawk's order is not the insertion order
//! but that of its array implementation (gawk 5's `array.c`,
//! `cint_array.c`, `int_array.c`, `str_array.c`), deterministic for a
//! given sequence of insertions and deletions. This models those tables
//! closely enough to list the keys as gawk does; the values stay in the
//! interpreter's own map.
//!
//! - An empty array takes the type its first key asks for: `cint` for an
//!   integer >= 0, `int` for another integer, `str` for anything else.
//! - `cint` keeps integers >= 0 in power-of-two "hashed array trees" and
//!   lists them in ascending order, after its side table (`xarray`) of
//!   the keys it does not keep (other keys, and integers that would make
//!   it too sparse).
//! - `int` and `str` are chained hash tables whose size grows through a
//!   list of primes; a new key goes at the head of its chain, and listing
//!   walks the buckets in order. `int` lists its side table of strings
//!   first.
//!
//! A key is an integer when it reads as `sprintf("%d")` of a 32-bit
//! integer would write it (`0`, `-12`, not `012`, `+1` or `1.0`).

use std::collections::BTreeMap;
use std::rc::Rc;

/// The primes gawk's hash tables grow through (`grow_table`).
const SIZES: &[usize] = &[
    13, 127, 1021, 8191, 16381, 32749, 65497, 131101, 262147, 524309, 1048583, 2097169, 4194319,
    8388617, 16777259, 33554467, 67108879, 134217757, 268435459, 536870923, 1073741827,
];

/// A table grows when it holds more than this many keys per bucket
/// (`STR_CHAIN_MAX`, `INT_CHAIN_MAX`).
const CHAIN_MAX: usize = 2;

/// `NHAT`: integers below `2^NHAT` share one tree.
const NHAT: u32 = 10;

/// `THRESHOLD`: a `cint` array sends a key to its side table when the
/// leaf space it holds would exceed its keys by more than this.
const THRESHOLD: i64 = 1 << (NHAT + 1);

/// The integer a key stands for, if it is written as gawk writes one.
pub(super) fn integer_key(key: &str) -> Option<i32> {
    let digits = key.strip_prefix('-').unwrap_or(key);
    let canonical = key == "0"
        || (!digits.is_empty()
            && digits.as_bytes()[0] != b'0'
            && digits.bytes().all(|b| b.is_ascii_digit()));
    if canonical { key.parse().ok() } else { None }
}

/// The size after `size` in [`SIZES`], if there is one.
fn next_size(size: usize) -> Option<usize> {
    SIZES.iter().copied().find(|&s| s > size)
}

/// Gives a hash table the next size in [`SIZES`], empty; returns the old
/// buckets to move over, or `None` (and sets `maxed`) at the largest.
fn regrow<T: Clone>(buckets: &mut Vec<Vec<T>>, maxed: &mut bool) -> Option<Vec<Vec<T>>> {
    let Some(size) = next_size(buckets.len()) else {
        *maxed = true;
        return None;
    };
    Some(std::mem::replace(buckets, vec![Vec::new(); size]))
}

/// gawk's string hash (`awk_hash`: sdbm, kept to 32 bits; bytes are
/// signed, as `char` is on the x86 and Arm Linux builds).
fn str_hash(key: &str) -> u32 {
    key.bytes().fold(0u32, |h, b| {
        (b as i8 as i32 as u32).wrapping_add(h.wrapping_mul(65599))
    })
}

/// gawk's integer hash (`int_hash`: the final mix of Paul Hsieh's
/// SuperFastHash).
fn int_hash(k: i32) -> u32 {
    let mut k = k as u32;
    k ^= k << 3;
    k = k.wrapping_add(k >> 5);
    k ^= k << 4;
    k = k.wrapping_add(k >> 17);
    k ^= k << 25;
    k = k.wrapping_add(k >> 6);
    k
}

/// One gawk array's layout, for the order of its keys.
#[derive(Debug, Default)]
pub(super) struct Order {
    store: Store,
}

#[derive(Debug, Default)]
enum Store {
    /// No type yet (empty).
    #[default]
    Null,
    Cint(Box<Cint>),
    Int(Box<IntTable>),
    Str(StrTable),
}

impl Order {
    /// Records a key that was not in the array.
    pub(super) fn insert(&mut self, key: &Rc<str>) {
        self.store.insert(key);
    }

    /// Records that a key of the array was deleted.
    pub(super) fn remove(&mut self, key: &str) {
        self.store.remove(key);
    }

    /// Records `delete a`, or an array emptied to be refilled (`split`).
    pub(super) fn clear(&mut self) {
        self.store = Store::Null;
    }

    /// The keys in the order `for (k in a)` visits them.
    pub(super) fn keys(&self) -> Vec<Rc<str>> {
        let mut out = Vec::new();
        self.store.list(&mut out);
        out
    }
}

impl Store {
    fn len(&self) -> usize {
        match self {
            Store::Null => 0,
            Store::Cint(c) => c.len(),
            Store::Int(t) => t.len(),
            Store::Str(t) => t.len,
        }
    }

    fn insert(&mut self, key: &Rc<str>) {
        if let Store::Null = self {
            *self = match integer_key(key) {
                Some(k) if k >= 0 => Store::Cint(Box::default()),
                Some(_) => Store::Int(Box::default()),
                None => Store::Str(StrTable::default()),
            };
        }
        match self {
            Store::Null => {}
            Store::Cint(c) => c.insert(key),
            Store::Int(t) => t.insert(key),
            Store::Str(t) => t.insert(key),
        }
    }

    fn remove(&mut self, key: &str) {
        let promote = match self {
            Store::Null => return,
            Store::Cint(c) => c.remove(key),
            Store::Int(t) => t.remove(key),
            Store::Str(t) => {
                t.remove(key);
                None
            }
        };
        if let Some(side) = promote {
            // The array's own keys are gone: its side table takes its
            // place (`*symbol = *xn`).
            *self = side;
        } else if self.len() == 0 {
            *self = Store::Null;
        }
    }

    fn list(&self, out: &mut Vec<Rc<str>>) {
        match self {
            Store::Null => {}
            Store::Cint(c) => c.list(out),
            Store::Int(t) => t.list(out),
            Store::Str(t) => t.list(out),
        }
    }
}

/// The end of a chain in [`StrTable`].
const NIL: u32 = u32::MAX;

/// `str_array`: chained buckets, each chain a list through an arena of
/// nodes (a new key goes at its chain's head), so that a key costs one
/// node and not a vector of its own.
#[derive(Debug, Default)]
struct StrTable {
    heads: Vec<u32>,
    nodes: Vec<StrNode>,
    /// Nodes of deleted keys, for reuse.
    free: Vec<u32>,
    len: usize,
    maxed: bool,
}

#[derive(Debug)]
struct StrNode {
    hash: u32,
    key: Option<Rc<str>>,
    next: u32,
}

impl StrTable {
    fn grow(&mut self) {
        let Some(size) = next_size(self.heads.len()) else {
            self.maxed = true;
            return;
        };
        let old = std::mem::replace(&mut self.heads, vec![NIL; size]);
        for head in old {
            let mut i = head;
            while i != NIL {
                let node = &mut self.nodes[i as usize];
                let next = node.next;
                let b = node.hash as usize % size;
                node.next = self.heads[b];
                self.heads[b] = i;
                i = next;
            }
        }
    }

    fn insert(&mut self, key: &Rc<str>) {
        if self.heads.is_empty() {
            self.grow();
        }
        self.len += 1;
        if !self.maxed && self.len / self.heads.len() > CHAIN_MAX {
            self.grow();
        }
        let hash = str_hash(key);
        let b = hash as usize % self.heads.len();
        let node = StrNode {
            hash,
            key: Some(key.clone()),
            next: self.heads[b],
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.nodes[i as usize] = node;
                i
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        };
        self.heads[b] = i;
    }

    fn remove(&mut self, key: &str) -> bool {
        if self.heads.is_empty() {
            return false;
        }
        let b = str_hash(key) as usize % self.heads.len();
        let (mut prev, mut i) = (NIL, self.heads[b]);
        while i != NIL {
            let node = &self.nodes[i as usize];
            let next = node.next;
            if node.key.as_deref() == Some(key) {
                if prev == NIL {
                    self.heads[b] = next;
                } else {
                    self.nodes[prev as usize].next = next;
                }
                self.nodes[i as usize].key = None;
                self.free.push(i);
                self.len -= 1;
                return true;
            }
            (prev, i) = (i, next);
        }
        false
    }

    fn list(&self, out: &mut Vec<Rc<str>>) {
        for &head in &self.heads {
            let mut i = head;
            while i != NIL {
                let node = &self.nodes[i as usize];
                out.extend(node.key.clone());
                i = node.next;
            }
        }
    }
}

/// One chain of `int_array`'s buckets, the head last; each bucket holds
/// up to two integers (only the head may be part full).
type IntChain = Vec<Vec<(i32, Rc<str>)>>;

/// `int_array`: chained buckets of integers, and a `str` side table for
/// the keys that are not integers.
#[derive(Debug, Default)]
struct IntTable {
    buckets: Vec<IntChain>,
    ints: usize,
    maxed: bool,
    side: Option<Box<Store>>,
}

impl IntTable {
    fn len(&self) -> usize {
        self.ints + self.side.as_ref().map_or(0, |s| s.len())
    }

    /// `int_insert`: fills the head bucket or starts a new head.
    fn place(buckets: &mut [IntChain], k: i32, key: Rc<str>) {
        let n = buckets.len();
        let chain = &mut buckets[int_hash(k) as usize % n];
        match chain.last_mut() {
            Some(head) if head.len() < 2 => head.push((k, key)),
            _ => chain.push(vec![(k, key)]),
        }
    }

    fn grow(&mut self) {
        let Some(old) = regrow(&mut self.buckets, &mut self.maxed) else {
            return;
        };
        for chain in old {
            for bucket in chain.into_iter().rev() {
                for (k, key) in bucket {
                    Self::place(&mut self.buckets, k, key);
                }
            }
        }
    }

    fn insert(&mut self, key: &Rc<str>) {
        let Some(k) = integer_key(key) else {
            self.side
                .get_or_insert_with(|| Box::new(Store::Str(StrTable::default())))
                .insert(key);
            return;
        };
        if self.buckets.is_empty() {
            self.grow();
        }
        self.ints += 1;
        if !self.maxed && self.ints / self.buckets.len() > CHAIN_MAX {
            self.grow();
        }
        Self::place(&mut self.buckets, k, key.clone());
    }

    /// Removes `key`; when only the side table is left, returns it to
    /// take the array's place.
    fn remove(&mut self, key: &str) -> Option<Store> {
        let Some(k) = integer_key(key) else {
            if let Some(side) = &mut self.side {
                side.remove(key);
                if side.len() == 0 {
                    self.side = None;
                }
            }
            return None;
        };
        if self.buckets.is_empty() {
            return None;
        }
        let n = self.buckets.len();
        let chain = &mut self.buckets[int_hash(k) as usize % n];
        // Buckets from the head (the last) down.
        let (bi, i) = chain
            .iter()
            .enumerate()
            .rev()
            .find_map(|(bi, b)| b.iter().position(|(x, _)| *x == k).map(|i| (bi, i)))?;
        chain[bi].remove(i);
        let head = chain.len() - 1;
        if chain[bi].is_empty() {
            chain.remove(bi);
        } else if bi != head {
            // The head's last key moves into the bucket, which stays full.
            if let Some(moved) = chain[head].pop() {
                chain[bi].push(moved);
            }
            if chain[head].is_empty() {
                chain.pop();
            }
        }
        self.ints -= 1;
        if self.ints == 0 {
            return self.side.take().map(|s| *s);
        }
        None
    }

    fn list(&self, out: &mut Vec<Rc<str>>) {
        if let Some(side) = &self.side {
            side.list(out);
        }
        for chain in &self.buckets {
            for bucket in chain.iter().rev() {
                out.extend(bucket.iter().map(|(_, key)| key.clone()));
            }
        }
    }
}

/// `cint_array`: integers >= 0 in ascending order, after a side table
/// (`int` or `str`, typed by its first key) of everything else.
#[derive(Debug, Default)]
struct Cint {
    keys: BTreeMap<i32, Rc<str>>,
    /// The leaves holding keys: (base, size) and how many keys each has.
    leaves: BTreeMap<(i64, i64), usize>,
    /// The leaf space allocated (`array_capacity`).
    capacity: i64,
    side: Option<Box<Store>>,
}

/// `cint_hash`: which tree holds `k` (`NHAT` for `k < 2^NHAT`, else one
/// more than the top bit's position).
fn cint_tree(k: i64) -> u32 {
    let r = 63 - (k.max(1) as u64).leading_zeros();
    if r < NHAT { NHAT } else { r + 1 }
}

/// The leaf (base, size) `tree_lookup` puts `k` in.
fn cint_leaf(k: i64) -> (i64, i64) {
    let h1 = cint_tree(k);
    let (mut m, mut base) = if h1 - 1 < NHAT {
        (NHAT, 0)
    } else {
        (h1 - 1, 1i64 << (h1 - 1))
    };
    loop {
        let n = m.div_ceil(2);
        let size = 1i64 << n;
        base += size * ((k - base) / size);
        if n <= NHAT {
            return (base, size);
        }
        m = n;
    }
}

impl Cint {
    fn len(&self) -> usize {
        self.keys.len() + self.side.as_ref().map_or(0, |s| s.len())
    }

    fn insert(&mut self, key: &Rc<str>) {
        if let Some(k) = integer_key(key).filter(|k| *k >= 0) {
            // The capacity estimate `cint_lookup` checks first.
            let m = cint_tree(i64::from(k)) - 1;
            let mut li = m.max(NHAT);
            while li >= NHAT {
                li = li.div_ceil(2);
            }
            let estimate = self.capacity + (1i64 << li);
            if estimate - self.keys.len() as i64 <= THRESHOLD {
                let leaf = cint_leaf(i64::from(k));
                let held = self.leaves.entry(leaf).or_insert(0);
                if *held == 0 {
                    self.capacity += leaf.1;
                }
                *held += 1;
                self.keys.insert(k, key.clone());
                return;
            }
        }
        let side = self.side.get_or_insert_with(|| {
            Box::new(if integer_key(key).is_some() {
                Store::Int(Box::default())
            } else {
                Store::Str(StrTable::default())
            })
        });
        side.insert(key);
    }

    /// Removes `key`; when only the side table is left, returns it to
    /// take the array's place.
    fn remove(&mut self, key: &str) -> Option<Store> {
        if let Some(k) = integer_key(key).filter(|k| self.keys.contains_key(k)) {
            self.keys.remove(&k);
            let leaf = cint_leaf(i64::from(k));
            if let Some(held) = self.leaves.get_mut(&leaf) {
                *held -= 1;
                if *held == 0 {
                    self.leaves.remove(&leaf);
                    self.capacity -= leaf.1;
                }
            }
            if self.keys.is_empty() {
                return self.side.take().map(|s| *s);
            }
            return None;
        }
        if let Some(side) = &mut self.side {
            side.remove(key);
            if side.len() == 0 {
                self.side = None;
            }
        }
        None
    }

    fn list(&self, out: &mut Vec<Rc<str>>) {
        if let Some(side) = &self.side {
            side.list(out);
        }
        out.extend(self.keys.values().cloned());
    }
}

/// The keys a set of inserted keys would list in, for the tests.
#[cfg(test)]
fn order_of(keys: &[&str]) -> Vec<String> {
    let mut o = Order::default();
    let mut seen = std::collections::BTreeSet::new();
    for k in keys {
        if seen.insert(*k) {
            o.insert(&Rc::from(*k));
        }
    }
    o.keys().iter().map(|k| k.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_keys_are_written_as_printf_writes_them() {
        assert_eq!(integer_key("0"), Some(0));
        assert_eq!(integer_key("-12"), Some(-12));
        assert_eq!(integer_key("2147483647"), Some(i32::MAX));
        for no in ["012", "+1", "1.0", "-0", "-", "", " 1", "2147483648", "1e3"] {
            assert_eq!(integer_key(no), None, "{no}");
        }
    }

    #[test]
    fn small_integers_list_in_ascending_order_after_other_keys() {
        assert_eq!(
            order_of(&["3", "1", "2", "x", "10"]),
            ["x", "1", "2", "3", "10"]
        );
    }

    #[test]
    fn leaves_are_where_gawk_puts_them() {
        assert_eq!(cint_leaf(5), (0, 32));
        assert_eq!(cint_leaf(1000), (992, 32));
        assert_eq!(cint_leaf(1500), (1472, 32));
        assert_eq!(cint_leaf(1_000_000), (999_424, 1024));
    }
}
