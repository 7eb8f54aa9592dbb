//! The GPT-2 demo's page logic, DOM-free: which next-token rows the chart shows (with and
//! without knock-outs), how the layer, head and token selection fits a model and a prompt, and
//! how labels are thinned or clipped so they never run together.
#![cfg(not(target_arch = "wasm32"))] // native tests (the browser tests are in tests/browser/)

use attention_live::demos::gpt2::{clip_label, fit_selection, label_stride, next_rows, slider_max, Moved, Prob};
use attention_live::gpt2::protocol::Candidate;

fn cands(list: &[(u32, f64)]) -> Vec<Candidate> {
    list.iter().map(|&(id, prob)| Candidate { id, text: format!("t{id}"), prob }).collect()
}

#[test]
fn without_knock_outs_the_chart_is_the_top_of_the_list() {
    let next = cands(&[(5, 0.5), (6, 0.3), (7, 0.1), (8, 0.05)]);
    let rows = next_rows(&next, None, 4, 3);
    assert_eq!(rows.iter().map(|r| r.id).collect::<Vec<_>>(), [5, 6, 7]);
    assert!(rows.iter().all(|r| r.knocked.is_none()));
    assert_eq!(rows[0].intact, Prob::Exact(0.5));
}

#[test]
fn with_knock_outs_a_token_that_falls_keeps_its_row_with_both_probabilities() {
    // Intact: token 1 is the favourite. Knocked out: it falls to 2% (10th of the list of 10
    // asked, so still listed), and tokens 20 and 21 rise into the top 2.
    let base = cands(&[(1, 0.82), (2, 0.05), (3, 0.04), (4, 0.03)]);
    let next = cands(&[
        (20, 0.3),
        (21, 0.2),
        (2, 0.1),
        (9, 0.05),
        (10, 0.04),
        (11, 0.03),
        (12, 0.03),
        (13, 0.03),
        (14, 0.03),
        (1, 0.02),
    ]);
    let rows = next_rows(&next, Some(&base), 10, 2);
    // The union of each model's top 2: {1, 2} ∪ {20, 21}, sorted by the intact probability.
    assert_eq!(rows.iter().map(|r| r.id).collect::<Vec<_>>(), [1, 2, 20, 21]);
    assert_eq!((rows[0].intact, rows[0].knocked), (Prob::Exact(0.82), Some(Prob::Exact(0.02))));
    assert_eq!((rows[1].intact, rows[1].knocked), (Prob::Exact(0.05), Some(Prob::Exact(0.1))));
    // 20 and 21 are not in the intact list of 4 (of 10 asked): top-k or top-p cut them, so
    // their intact probability is exactly 0 under those settings. Ties go by the knocked-out one.
    assert_eq!((rows[2].intact, rows[2].knocked), (Prob::Exact(0.0), Some(Prob::Exact(0.3))));
    assert_eq!(rows[3].knocked, Some(Prob::Exact(0.2)));
}

#[test]
fn an_unlisted_token_of_a_full_list_is_only_bounded() {
    // A full list (as many as asked) that misses a token: below its last entry, printed "<".
    let base = cands(&[(1, 0.6), (2, 0.3), (3, 0.01)]);
    let next = cands(&[(4, 0.7), (2, 0.2), (5, 0.02)]);
    let rows = next_rows(&next, Some(&base), 3, 2);
    assert_eq!(rows.iter().map(|r| r.id).collect::<Vec<_>>(), [1, 2, 4]);
    assert_eq!(rows[0].knocked, Some(Prob::Below(0.02)));
    assert_eq!(rows[2].intact, Prob::Below(0.01));
    assert_eq!(rows[0].knocked.unwrap().label(), "<2.0%");
    assert_eq!(rows[0].knocked.unwrap().bar(), 0.0, "a bound draws no bar");
    assert_eq!(Prob::Exact(0.8192).label(), "81.9%");
    // A bound is rounded up: below 0.012% is "<0.1%", never "<0.0%".
    assert_eq!(Prob::Below(0.00012).label(), "<0.1%");
    assert_eq!(Prob::Below(0.0231).label(), "<2.4%");
}

#[test]
fn the_selection_keeps_what_fits_and_moves_the_rest_to_the_last() {
    // The induction model (2 layers × 4 heads) and a 7-token prompt.
    let f = fit_selection(1, 3, 6, 2, 4, 7);
    assert_eq!((f.layer, f.head, f.token, f.moved.len()), (1, 3, 6, 0));
    let f = fit_selection(9, 3, 10, 2, 4, 7);
    assert_eq!((f.layer, f.head, f.token), (1, 3, 6));
    assert_eq!(
        f.moved,
        [
            Moved { key: "layer", wanted: 9, now: 1, why: "this model has layers 0 to 1".into() },
            Moved { key: "token", wanted: 10, now: 6, why: "the prompt has tokens 0 to 6".into() },
        ]
    );
    // Nonsense never panics: negative values go to 0, an empty model or prompt to 0.
    let f = fit_selection(-1, i64::MAX, i64::MIN, 0, 0, 0);
    assert_eq!((f.layer, f.head, f.token), (0, 0, 0));
    assert_eq!(slider_max(12, 12, 1024), [("layer", 11), ("head", 11), ("token", 1023)]);
    assert_eq!(slider_max(2, 4, 0), [("layer", 1), ("head", 3), ("token", 0)]);
}

#[test]
fn labels_are_thinned_so_they_keep_a_gap_and_clipped_to_their_column() {
    // 20 px labels with a 4 px gap: one per cell at 24 px, every second at 23 px, every third at 8 px.
    assert_eq!(label_stride(20.0, 4.0, 24.0), 1);
    assert_eq!(label_stride(20.0, 4.0, 23.0), 2);
    assert_eq!(label_stride(20.0, 4.0, 8.0), 3);
    assert_eq!(label_stride(20.0, 4.0, 0.0), 1);
    // Drawn labels k cells apart never touch: k·spacing ≥ widest + gap.
    for spacing in [3.0, 7.5, 11.0, 19.9, 40.0] {
        let k = label_stride(33.0, 4.0, spacing) as f64;
        assert!(k * spacing >= 37.0 && (k - 1.0) * spacing < 37.0, "spacing {spacing}: k = {k}");
    }
    assert_eq!(clip_label("·fluffy", 10), "·fluffy");
    assert_eq!(clip_label("·fluffy", 4), "·fl…");
    assert_eq!(clip_label("·fluffy", 0), "");
}
