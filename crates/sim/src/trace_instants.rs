//! A link trace's opportunity instants, held compactly: up to 10^7 of them
//! ([`crate::limits::MAX_TRACE_OPPORTUNITIES`]) would take 80 MB as u64 ns
//! and 40 MB as u32 ms; as the gap in ms from the previous instant (the
//! first from 0), unsigned LEB128, almost every one takes a byte, since a
//! trace's lines are mostly within a few ms of each other.
//!
//! The JSON form (what the front end sends, `TraceConfig.gaps_ms`) is that
//! byte string in standard base64, so the configuration stays one JSON
//! document (to the engine, to the live delay line's file) without a list
//! of 10^7 numbers on either side.
//!
//! Random access goes through a checkpoint every [`STRIDE`] instants (its
//! value and where the next gap starts): an instant is at most `STRIDE - 1`
//! gaps from one, and a search is a binary search over the checkpoints.

use std::fmt;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Instants between checkpoints: 32 keeps the checkpoints (8 bytes each)
/// at a quarter of a byte per instant and an access at most 31 gaps long.
const STRIDE: usize = 32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Checkpoint {
    /// The instant of entry `k * STRIDE`, ms.
    ms: u32,
    /// Offset in `gaps` of entry `k * STRIDE + 1`'s gap.
    next: u32,
}

/// Non-decreasing instants in whole ms (each below 2^32).
#[derive(Clone, PartialEq, Eq)]
pub struct TraceInstants {
    /// LEB128 of each instant's gap from the previous one (the first's from 0).
    gaps: Vec<u8>,
    len: usize,
    checkpoints: Vec<Checkpoint>,
}

impl TraceInstants {
    /// From the instants themselves (tests, and the engine's own traces).
    pub fn from_ms(instants: &[u32]) -> Self {
        let mut gaps = Vec::with_capacity(instants.len());
        let mut prev = 0;
        for &ms in instants {
            assert!(ms >= prev, "instants must not decrease");
            let mut gap = ms - prev;
            loop {
                let low = (gap & 0x7f) as u8;
                gap >>= 7;
                if gap == 0 {
                    gaps.push(low);
                    break;
                }
                gaps.push(low | 0x80);
            }
            prev = ms;
        }
        Self::from_gaps(gaps).expect("well-formed")
    }

    /// From LEB128 gaps; an error if one is cut short or an instant passes
    /// 2^32 - 1 ms.
    pub fn from_gaps(gaps: Vec<u8>) -> Result<Self, String> {
        let mut checkpoints = Vec::with_capacity(gaps.len() / STRIDE + 1);
        let (mut pos, mut ms, mut len) = (0usize, 0u32, 0usize);
        while pos < gaps.len() {
            let gap = read_gap(&gaps, &mut pos).ok_or("a gap is cut short or above 2^32 ms")?;
            ms = ms.checked_add(gap).ok_or("an instant is above 2^32 ms")?;
            if len % STRIDE == 0 {
                let next = u32::try_from(pos).map_err(|_| "more than 4 GB of gaps")?;
                checkpoints.push(Checkpoint { ms, next });
            }
            len += 1;
        }
        Ok(Self { gaps, len, checkpoints })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Instant `idx` (< `len`), ms.
    pub fn get(&self, idx: usize) -> u32 {
        let cp = self.checkpoints[idx / STRIDE];
        let (mut ms, mut pos) = (cp.ms, cp.next as usize);
        for _ in 0..idx % STRIDE {
            ms += read_gap(&self.gaps, &mut pos).expect("checked when built");
        }
        ms
    }

    /// The last instant, ms (None if there is none).
    pub fn last(&self) -> Option<u32> {
        (self.len > 0).then(|| self.get(self.len - 1))
    }

    /// Index of the first instant at or after `ms` (`len` if none is).
    pub fn first_at_or_after(&self, ms: u64) -> usize {
        // Checkpoints before `ms`: the answer lies after the last of them.
        let k = self.checkpoints.partition_point(|c| (c.ms as u64) < ms);
        if k == 0 {
            return 0;
        }
        let cp = self.checkpoints[k - 1];
        let (mut at, mut pos, mut idx) = (cp.ms as u64, cp.next as usize, (k - 1) * STRIDE);
        while at < ms && idx + 1 < self.len {
            at += read_gap(&self.gaps, &mut pos).expect("checked when built") as u64;
            idx += 1;
        }
        if at < ms {
            idx + 1 // all before `ms`
        } else {
            idx
        }
    }

    /// Every instant in order, ms.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        let mut pos = 0;
        let mut ms = 0u32;
        (0..self.len).map(move |_| {
            ms += read_gap(&self.gaps, &mut pos).expect("checked when built");
            ms
        })
    }
}

/// One LEB128 gap at `*pos`, advancing it; None if cut short or above u32.
fn read_gap(bytes: &[u8], pos: &mut usize) -> Option<u32> {
    let mut value: u64 = 0;
    for shift in (0..35).step_by(7) {
        let byte = *bytes.get(*pos)?;
        *pos += 1;
        value |= ((byte & 0x7f) as u64) << shift;
        if byte & 0x80 == 0 {
            return u32::try_from(value).ok();
        }
    }
    None
}

impl fmt::Debug for TraceInstants {
    // Not every instant: there can be millions.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TraceInstants({} instants, {} bytes)", self.len, self.gaps.len())
    }
}

impl Serialize for TraceInstants {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&BASE64.encode(&self.gaps))
    }
}

impl<'de> Deserialize<'de> for TraceInstants {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Borrowed from the JSON text where it can be (base64 needs no escapes).
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        let gaps = BASE64.decode(text.as_bytes()).map_err(|e| serde::de::Error::custom(format!("gaps_ms: {e}")))?;
        Self::from_gaps(gaps).map_err(|e| serde::de::Error::custom(format!("gaps_ms: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_round_trip_through_gaps_and_base64() {
        // Gaps of every LEB128 length, repeats, and more than a stride.
        let mut ms = vec![0, 0, 1, 1, 1, 127, 128, 16_511, 16_512, 2_113_663, 2_113_664, 86_400_000];
        ms.extend((0..100).map(|k| 86_400_000 + k / 3));
        let t = TraceInstants::from_ms(&ms);
        assert_eq!(t.len(), ms.len());
        assert_eq!(t.iter().collect::<Vec<_>>(), ms);
        assert_eq!((0..ms.len()).map(|i| t.get(i)).collect::<Vec<_>>(), ms);
        assert_eq!(t.last(), Some(86_400_033));
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(serde_json::from_str::<TraceInstants>(&json).unwrap(), t);
        // Mostly one byte an instant.
        let dense = TraceInstants::from_ms(&(0..10_000).map(|k| k / 8).collect::<Vec<_>>());
        assert_eq!(dense.gaps.len(), 10_000);
    }

    #[test]
    fn first_at_or_after_is_a_partition_point() {
        let ms: Vec<u32> = (0..1000u32).map(|k| k / 7 * 3 + 1).collect();
        let t = TraceInstants::from_ms(&ms);
        for x in 0..(ms.last().unwrap() + 3) as u64 {
            assert_eq!(t.first_at_or_after(x), ms.partition_point(|&m| (m as u64) < x), "{x}");
        }
    }

    #[test]
    fn malformed_gaps_are_errors() {
        assert!(TraceInstants::from_gaps(vec![0x80]).is_err()); // cut short
        assert!(TraceInstants::from_gaps(vec![0xff, 0xff, 0xff, 0xff, 0x7f]).is_err()); // above u32
        assert!(TraceInstants::from_gaps(vec![0xff, 0xff, 0xff, 0xff, 0x0f, 1]).is_err()); // sum above u32
        assert!(serde_json::from_str::<TraceInstants>("\"not base64!\"").is_err());
    }
}
