//! Windowed running minimum of (time, value) samples: Linux's
//! lib/win_minmax.c (Kathleen Nichols' algorithm), here for the sender's
//! `tcp_sock.rtt_min` (what `tcp_min_rtt()` reads).
//!
//! The filter keeps the best, second-best and third-best samples of the
//! last `win` time units (each "k-th best" is the best among samples newer
//! than the (k-1)-th), so when the best ages out the next takes its place.
//! Times are u32 and compared by wrapping difference, as in the kernel.

use cc_native::{Minmax, MinmaxSample};

/// Sets every slot to `(t, v)` and returns `v`.
pub fn reset(m: &mut Minmax, t: u32, v: u32) -> u32 {
    m.s = [MinmaxSample { t, v }; 3];
    v
}

/// Adds `(t, meas)` to the running minimum over the last `win` units and
/// returns the current minimum.
pub fn running_min(m: &mut Minmax, win: u32, t: u32, meas: u32) -> u32 {
    let val = MinmaxSample { t, v: meas };
    // A new best, or nothing left in the window: restart from this sample.
    if meas <= m.s[0].v || t.wrapping_sub(m.s[2].t) > win {
        return reset(m, t, meas);
    }
    if meas <= m.s[1].v {
        m.s[1] = val;
        m.s[2] = val;
    } else if meas <= m.s[2].v {
        m.s[2] = val;
    }
    subwin_update(m, win, val)
}

/// Ages the slots after `val` was placed (lib/win_minmax.c
/// `minmax_subwin_update`).
fn subwin_update(m: &mut Minmax, win: u32, val: MinmaxSample) -> u32 {
    let dt = val.t.wrapping_sub(m.s[0].t);
    if dt > win {
        // The best expired: promote the 2nd and 3rd, then maybe again.
        m.s[0] = m.s[1];
        m.s[1] = m.s[2];
        m.s[2] = val;
        if val.t.wrapping_sub(m.s[0].t) > win {
            m.s[0] = m.s[1];
            m.s[1] = m.s[2];
            m.s[2] = val;
        }
    } else if m.s[1].t == m.s[0].t && dt > win / 4 {
        // A quarter window passed with one distinct sample: take a new 2nd.
        m.s[1] = val;
        m.s[2] = val;
    } else if m.s[2].t == m.s[1].t && dt > win / 2 {
        // Half a window with two distinct samples: take a new 3rd.
        m.s[2] = val;
    }
    m.s[0].v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_minimum_within_the_window() {
        let mut m = Minmax::default();
        reset(&mut m, 0, u32::MAX);
        assert_eq!(running_min(&mut m, 100, 0, 50), 50);
        assert_eq!(running_min(&mut m, 100, 10, 70), 50);
        assert_eq!(running_min(&mut m, 100, 20, 40), 40);
        assert_eq!(running_min(&mut m, 100, 90, 60), 40);
    }

    #[test]
    fn expired_minimum_is_replaced_by_a_newer_sample() {
        let mut m = Minmax::default();
        reset(&mut m, 0, u32::MAX);
        running_min(&mut m, 100, 0, 10);
        // Larger samples later in the window become the 2nd/3rd best.
        running_min(&mut m, 100, 40, 30);
        running_min(&mut m, 100, 80, 20);
        // At t=150 the sample from t=0 is older than the window.
        let v = running_min(&mut m, 100, 150, 90);
        assert!(v == 30 || v == 20, "got {v}");
        assert!(v > 10);
        // Much later everything old has expired: only the new sample counts.
        assert_eq!(running_min(&mut m, 100, 1000, 99), 99);
    }
}
