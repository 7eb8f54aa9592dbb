//! A grid of the demo as a table of buttons: a cell's colour is its shade (viridis from 0 to 1, or
//! blue–white–red from −1 to 1), its text the number or token, and a click (or Enter) picks it.
//! A table rather than a canvas: every cell is focusable and read out, and a wide grid scrolls
//! sideways on a phone.

use leptos::prelude::*;

use super::Grid;
use crate::kit::plot::colormap::viridis;
use crate::kit::plot::matrix::diverging;

/// The cell's background and a text colour that stays readable on it.
fn colours(shade: f64, signed: bool) -> String {
    let [r, g, b] = if signed { diverging(shade) } else { viridis(shade.clamp(0.0, 1.0)) };
    let light = 0.299 * r as f64 + 0.587 * g as f64 + 0.114 * b as f64 > 140.0;
    let ink = if light { "#111" } else { "#fff" };
    format!("background: rgb({r}, {g}, {b}); color: {ink}")
}

/// The legend: the scale's colours from its low end to its high end, and what they mean.
fn legend(g: &Grid) -> impl IntoView {
    let stops: Vec<String> = (0..=4)
        .map(|i| {
            let t = i as f64 / 4.0;
            let [r, gr, b] = if g.signed { diverging(2.0 * t - 1.0) } else { viridis(t) };
            format!("rgb({r}, {gr}, {b})")
        })
        .collect();
    let style = format!("background: linear-gradient(to right, {})", stops.join(", "));
    let (low, high) = if g.signed { ("−1", "1") } else { ("0", "1") };
    view! {
        <p class="inside-legend">
            <span>{low}</span><span class="inside-scale" style=style aria-hidden="true"></span><span>{high}</span>
            <span class="muted">{g.legend.clone()}</span>
        </p>
    }
}

/// The grid, with `selected` outlined; `pick(row, column)` when a cell is chosen.
#[component]
pub fn GridTable(
    grid: Grid,
    selected: Option<(usize, usize)>,
    pick: impl Fn(usize, usize) + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let signed = grid.signed;
    let head = grid.cols.iter().map(|c| view! { <th scope="col">{c.clone()}</th> }).collect_view();
    let body = grid
        .cells
        .iter()
        .zip(&grid.rows)
        .enumerate()
        .map(|(r, (row, label))| {
            let cells = row
                .iter()
                .enumerate()
                .map(|(c, cell)| {
                    let chosen = selected == Some((r, c));
                    view! {
                        <td>
                            <button type="button" class:chosen=chosen style=colours(cell.shade, signed)
                                title=cell.title.clone() aria-label=cell.title.clone() aria-pressed=chosen.to_string()
                                on:click=move |_| pick(r, c)>{cell.text.clone()}</button>
                        </td>
                    }
                })
                .collect_view();
            view! { <tr><th scope="row">{label.clone()}</th>{cells}</tr> }
        })
        .collect_view();
    view! {
        <figure class="inside-grid" data-grid=grid.key>
            <figcaption>{grid.title.clone()}</figcaption>
            <div class="inside-scroll" tabindex="0" role="region" aria-label=grid.title.clone()>
                <table>
                    <thead><tr><th scope="col"></th>{head}</tr></thead>
                    <tbody>{body}</tbody>
                </table>
            </div>
            {legend(&grid)}
        </figure>
    }
}
