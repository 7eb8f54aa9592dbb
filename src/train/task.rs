//! The tasks the lab trains on, over one character vocabulary: digits `0`–`9` (ids 0–9),
//! letters `a`–`p` (ids 10–25), the separator `>` (26) and the start `^` (27).
//!
//! Every example starts with `^`. The model reads all but the last token (T = length − 1) and
//! predicts each next one; only the predictions the task can determine are scored (the others
//! have target −1 and are left out of the loss, as PyTorch's `ignore_index`).

use serde::{Deserialize, Serialize};

use crate::numerics::rng::Rng;

pub const VOCAB: usize = 28;
pub const SEP: u32 = 26;
pub const BOS: u32 = 27;
pub const MIN_LENGTH: usize = 2;
pub const MAX_LENGTH: usize = 16;
/// The seed of the probe sequence: fixed, so every run's heads are shown on the same input.
const PROBE_SEED: u64 = 0x9E0B_E5EE;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Task {
    /// `^`, n distinct letters, the same n letters again: the repeat is predictable only by
    /// looking back at what followed the same letter the first time (an induction head).
    #[default]
    Copy,
    /// `^`, n digits, `>`, the digits in ascending order.
    Sort,
    /// `^`, n letters, `>`, the letters in reverse order.
    Reverse,
    /// `^`, then strings of 3 to n distinct letters (2 when n = 2), each repeated 2 or 3 times,
    /// one after another until 4n positions are filled: how far back the earlier copy is varies
    /// from string to string, so no fixed offset finds it (the repeated random sequences of
    /// Olsson et al. 2022).
    Repeat,
}

/// A batch: `b` rows of `t` input ids and their targets (−1: not scored), row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    pub b: usize,
    pub t: usize,
    pub ids: Vec<u32>,
    pub targets: Vec<i32>,
}

pub fn token_char(id: u32) -> char {
    match id {
        0..=9 => (b'0' + id as u8) as char,
        10..=25 => (b'a' + (id - 10) as u8) as char,
        SEP => '>',
        BOS => '^',
        _ => '?',
    }
}

/// The id of a character of the vocabulary.
pub fn char_token(c: char) -> Option<u32> {
    match c {
        '0'..='9' => Some(c as u32 - '0' as u32),
        'a'..='p' => Some(c as u32 - 'a' as u32 + 10),
        '>' => Some(SEP),
        '^' => Some(BOS),
        _ => None,
    }
}

impl Task {
    /// T, the number of input positions (and the model's `n_positions`).
    pub fn input_len(self, n: usize) -> usize {
        match self {
            Task::Copy => 2 * n,
            Task::Sort | Task::Reverse => 2 * n + 1,
            Task::Repeat => 4 * n,
        }
    }

    pub fn check_length(self, n: usize) -> Result<(), String> {
        if !(MIN_LENGTH..=MAX_LENGTH).contains(&n) {
            return Err(format!("the length must be {MIN_LENGTH} to {MAX_LENGTH} items (got {n})"));
        }
        Ok(())
    }

    /// The input positions whose next token is scored, the same in every example (repeat's vary
    /// from example to example: see [`Task::scored_example`]).
    pub fn scored(self, n: usize) -> std::ops::Range<usize> {
        match self {
            // Position n predicts the repeat's first letter, which nothing determines.
            Task::Copy => n + 1..2 * n,
            // Position n + 1 is the `>`: from there on, every next token is determined.
            Task::Sort | Task::Reverse => n + 1..2 * n + 1,
            Task::Repeat => 0..0,
        }
    }

    /// How many predictions an example scores: the same for every example, except repeat's
    /// (`None`), which depend on the strings' lengths.
    pub fn scored_count(self, n: usize) -> Option<usize> {
        (self != Task::Repeat).then(|| self.scored(n).len())
    }

    /// One whole example: T + 1 tokens.
    pub fn example(self, n: usize, rng: &mut Rng) -> Vec<u32> {
        self.scored_example(n, rng).0
    }

    /// One whole example (T + 1 tokens) and, for each input position, whether its next token is
    /// scored.
    pub fn scored_example(self, n: usize, rng: &mut Rng) -> (Vec<u32>, Vec<bool>) {
        let mut below = |k: u32| (rng.next_u64() % k as u64) as u32;
        let mut seq = vec![BOS];
        match self {
            Task::Copy => {
                // n distinct letters: a partial Fisher–Yates shuffle of a–p.
                let mut letters: Vec<u32> = (10..26).collect();
                for i in 0..n {
                    let j = i + below((letters.len() - i) as u32) as usize;
                    letters.swap(i, j);
                }
                seq.extend_from_slice(&letters[..n]);
                seq.extend_from_slice(&letters[..n]);
            }
            Task::Sort => {
                let digits: Vec<u32> = (0..n).map(|_| below(10)).collect();
                let mut sorted = digits.clone();
                sorted.sort_unstable();
                seq.extend(digits);
                seq.push(SEP);
                seq.extend(sorted);
            }
            Task::Reverse => {
                let letters: Vec<u32> = (0..n).map(|_| 10 + below(16)).collect();
                seq.extend(letters.iter().copied());
                seq.push(SEP);
                seq.extend(letters.iter().rev());
            }
            Task::Repeat => {
                let t = self.input_len(n);
                // Whether each token (after `^`) is determined by what came before: a letter of a
                // string's second or third copy, except the copy's first (nothing marks where a
                // copy begins, nor whether a third follows).
                let mut determined = vec![false];
                let shortest = repeat_shortest(n);
                while seq.len() < t + 1 {
                    let len = shortest + below((n - shortest + 1) as u32) as usize;
                    let mut letters: Vec<u32> = (10..26).collect();
                    for i in 0..len {
                        let j = i + below((letters.len() - i) as u32) as usize;
                        letters.swap(i, j);
                    }
                    let copies = 2 + below(2) as usize;
                    for copy in 0..copies {
                        seq.extend_from_slice(&letters[..len]);
                        determined.extend((0..len).map(|i| copy > 0 && i > 0));
                    }
                }
                seq.truncate(t + 1);
                // Input position p predicts token p + 1.
                return (seq, determined[1..t + 1].to_vec());
            }
        }
        let scored = self.scored(n);
        let t = seq.len() - 1;
        (seq, (0..t).map(|p| scored.contains(&p)).collect())
    }

    /// `b` fresh examples as inputs and scored targets.
    pub fn batch(self, n: usize, b: usize, rng: &mut Rng) -> Batch {
        let t = self.input_len(n);
        let (mut ids, mut targets) = (Vec::with_capacity(b * t), Vec::with_capacity(b * t));
        for _ in 0..b {
            let (seq, scored) = self.scored_example(n, rng);
            ids.extend_from_slice(&seq[..t]);
            targets.extend((0..t).map(|p| if scored[p] { seq[p + 1] as i32 } else { -1 }));
        }
        Batch { b, t, ids, targets }
    }

    /// The fixed probe the heads are shown on: one example from a fixed seed (its inputs).
    pub fn probe(self, n: usize) -> Vec<u32> {
        self.scored_probe(n).0
    }

    /// The probe's inputs and, for each, whether its next token is scored.
    pub fn scored_probe(self, n: usize) -> (Vec<u32>, Vec<bool>) {
        let (mut seq, scored) = self.scored_example(n, &mut Rng::new(PROBE_SEED));
        seq.pop();
        (seq, scored)
    }
}

/// The repeat task's shortest string: 3 letters (2 when n = 2).
pub fn repeat_shortest(n: usize) -> usize {
    n.min(3)
}
