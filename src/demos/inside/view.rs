//! View of `inside`: asks the compute worker (through the kit's probe, which loads the model the
//! controls name) for the chosen tool's answer, and draws its grids as tables of cells. A
//! patching sweep reports its progress and can be stopped; a chosen cell shows its details.

use leptos::html::Canvas;
use leptos::prelude::*;

use super::grid::GridTable;
use super::{chosen, grids, head_view_link, plot, request, Answer, Grid, Model, Params, Tool};
use crate::kit::plot::lines::{draw_lines, Curve, Lines};
use crate::kit::probe::probe;
use crate::kit::worker::Event;
use crate::kit::DemoCtx;
use crate::numerics::format::Signed;
use crate::session::protocol::{Backend, Candidate, Reply, Request};

/// A next-token list as bars.
fn bars(title: String, next: &[Candidate]) -> impl IntoView {
    let rows = next
        .iter()
        .map(|c| {
            let width = format!("width: {:.1}%", Signed(100.0 * c.prob));
            view! {
                <li><span class="tok">{crate::formats::echo::echo(&c.text)}</span>
                    <span class="bar" style=width></span>
                    <span class="p">{format!("{:.1}%", Signed(100.0 * c.prob))}</span></li>
            }
        })
        .collect_view();
    view! { <div class="inside-bars"><h5>{title}</h5><ol>{rows}</ol></div> }
}

/// What the chosen cell holds: the lens's five most likely tokens there, a patched run's next
/// tokens beside the clean and corrupted runs', or a head's three scores and a link to its view.
fn details(a: &Answer, p: &Params, cell: Option<(usize, usize, usize)>, grids: &[Grid]) -> Option<AnyView> {
    let (g, r, c) = cell?;
    let key = grids.get(g)?.key;
    Some(match a {
        Answer::Lens(l) => {
            let top = l.top.get(r)?.get(c)?;
            bars(format!("{}, position {c}: the five most likely next tokens", grids[g].rows[r]), top).into_any()
        }
        Answer::Patching(pa) => {
            let run = if key == "residual" { pa.residual.get(r)?.get(c)? } else { pa.heads.get(r)?.get(c)? };
            let what = if key == "residual" {
                format!("{}, position {c} patched", grids[g].rows[r])
            } else {
                format!("Head {r}.{c} patched")
            };
            view! {
                <div class="inside-runs">
                    {bars(what, &run.next)}
                    {bars("The clean run".into(), &pa.clean_run.next)}
                    {bars("The corrupted run".into(), &pa.corrupt_run.next)}
                </div>
            }
            .into_any()
        }
        Answer::Heads(s) => {
            let score = |v: &Vec<Vec<f32>>| v.get(r).and_then(|row| row.get(c)).map_or(0.0, |&x| x as f64);
            let (prev, ind, dup) = (score(&s.previous), score(&s.induction), score(&s.duplicate));
            let prompt: String = s.tokens.iter().skip(s.offset).map(|t| t.text.as_str()).collect();
            let link = head_view_link(p.model, prompt.trim_start(), r, c, s.tokens.len() - s.offset);
            view! {
                <p class="inside-head">
                    {format!(
                        "Head {r}.{c}: previous-token {:.2}, induction {:.2}, duplicate-token {:.2}. ",
                        Signed(prev), Signed(ind), Signed(dup)
                    )}
                    <a href=link>{format!("Open head {r}.{c} in the head view on this sequence")}</a>
                </p>
            }
            .into_any()
        }
    })
}

/// The line above the grids: the answer the patching metric compares.
fn patch_line(a: &Answer) -> Option<String> {
    let Answer::Patching(p) = a else { return None };
    let e = crate::formats::echo::echo;
    Some(format!(
        "Metric: logit of {} minus logit of {} at the last token: {:.2} on the clean prompt, {:.2} on the corrupted \
         one. The prompts first differ at position {}.",
        e(&p.answer.text),
        e(&p.wrong.text),
        Signed(p.clean_run.metric as f64),
        Signed(p.corrupt_run.metric as f64),
        p.first
    ))
}

pub fn view(ctx: DemoCtx) -> AnyView {
    let params = ctx.params::<Params>();
    let progress = RwSignal::new(None::<(usize, usize)>);
    let stopped = RwSignal::new(false);
    let rerun = RwSignal::new(0u32);
    let runs_on = RwSignal::new(None::<(Backend, Option<String>)>);
    // The sweep under way (its request id, from its progress): a Stopped about another is not ours.
    let sweep_id = StoredValue::new(None::<u64>);
    // Only what changes the question asks again (the chosen cell does not).
    let asked = Memo::new(move |_| params.with(|p| (p.model, p.base.clone(), p.backend, request(p, 0))));
    let probe = probe(
        ctx,
        move || {
            rerun.track();
            let (model, base, backend, req) = asked.get();
            stopped.set(false);
            progress.set(None);
            sweep_id.set_value(None);
            // A sweep still running for the question before is stopped first.
            let mut a = super::super::ask_model(model.key(), model.label(), vec![Request::Stop, req])?;
            // GPT-2 small or SmolLM2 from where the reader downloaded it (kept in Cache Storage).
            if let (Model::Gpt2 | Model::Smollm2, Ok(folder)) = (model, super::super::checkpoint_folder(&base)) {
                a.base = folder;
                a.expect = None;
            }
            a.backend = backend.choice();
            Some(a)
        },
        move |ev| match ev {
            Event::Reply(Reply::Lens(l)) => Some((l.id, Answer::Lens(l))),
            Event::Reply(Reply::Heads(h)) => Some((h.id, Answer::Heads(h))),
            Event::Reply(Reply::Patching(p)) => {
                progress.set(None);
                Some((p.id, Answer::Patching(p)))
            }
            Event::Reply(Reply::PatchProgress { id, done, total }) if sweep_id.get_value().is_none_or(|s| s <= id) => {
                sweep_id.set_value(Some(id));
                progress.set(Some((done, total)));
                None
            }
            Event::Reply(Reply::Stopped { id }) if sweep_id.get_value() == Some(id) => {
                progress.set(None);
                stopped.set(true);
                None
            }
            Event::Reply(Reply::Backend { backend, notice, .. }) => {
                runs_on.set(Some((backend, notice)));
                None
            }
            _ => None,
        },
    );
    let answer = Memo::new(move |_| probe.answers.with(|a| a.as_ref().and_then(|a| a.first().cloned())));
    let shown = Memo::new(move |_| answer.with(|a| a.as_ref().map(grids).unwrap_or_default()));
    Effect::new(move |_| {
        let summary = |a: &Answer| params.with(|p| serde_json::to_value(super::summary(a, p)).ok());
        let out = answer.with(|a| a.as_ref().and_then(summary));
        ctx.computed.set(out);
    });
    let canvas = NodeRef::<Canvas>::new();
    ctx.paint(move |pal| {
        let c = canvas.get()?;
        let pal = *pal;
        answer.with(|a| {
            let p = plot(a.as_ref()?);
            let colours = [pal.blue, pal.orange, pal.green];
            let curves: Vec<Curve> = p
                .curves
                .iter()
                .enumerate()
                .map(|(i, (label, points))| Curve {
                    label,
                    colour: colours[i % colours.len()],
                    points: points.clone(),
                    dashed: false,
                })
                .collect();
            let (x_desc, y_desc, y_range) = (p.x_desc, p.y_desc, Some(p.y_range));
            let lines = Lines { curves: &curves, x_desc, y_desc, y_range, x_integer: true };
            Some(draw_lines(&c, &pal, &lines))
        })
    });
    let cell = Memo::new(move |_| params.with(|p| shown.with(|g| chosen(&p.cell, g))));
    let pick = move |g: usize, r: usize, c: usize| {
        let Some((key, token)) = shown.with_untracked(|gs| {
            gs.get(g).map(|grid| (grid.key, grid.cells.get(r).and_then(|row| row.get(c)).map(|x| x.text.clone())))
        }) else {
            return;
        };
        ctx.set_params::<Params>(|p| {
            p.cell = format!("{key}.{r}.{c}");
            // A lens cell's token is the one to follow across the layers.
            if key == "lens" {
                if let Some(Answer::Lens(l)) = answer.get_untracked() {
                    let first = l.top.get(r).and_then(|row| row.get(c)).and_then(|t| t.first());
                    p.track = first.map_or(token.unwrap_or_default(), |t| t.text.clone());
                }
            }
        });
    };
    let stop = move |_| {
        probe.worker.send(Request::Stop);
    };
    let status = move || {
        let (model, patching) = params.with(|p| (p.model.key(), p.tool == Tool::Patching));
        // A sweep's progress or Stop belongs to the patching tool only (one left behind by a change
        // of tool is stopped by the worker and says nothing here).
        if let Some((done, total)) = progress.get().filter(|_| patching) {
            return view! {
                <div class="inside-status" data-status="sweeping" role="status">
                    <label>{format!("Patching: {done} of {total} runs")}
                        <progress max=total.to_string() value=done.to_string()></progress></label>
                    <button type="button" class="stop" on:click=stop>"Stop"</button>
                </div>
            }
            .into_any();
        }
        if stopped.get() && patching {
            return view! {
                <div class="inside-status" data-status="stopped" role="status">
                    <p>"Stopped: nothing of this sweep is shown."</p>
                    <button type="button" on:click=move |_| rerun.update(|n| *n += 1)>"Run the sweep again"</button>
                </div>
            }
            .into_any();
        }
        let line = probe.waiting(ctx, model);
        let key = if line.is_some() { "waiting" } else { "ready" };
        let line = line.map(|l| view! { <p class="muted">{l}</p> });
        view! { <div class="inside-status" data-status=key role="status">{line}</div> }.into_any()
    };
    let backend_line = move || {
        runs_on.get().map(|(b, notice)| {
            let on = if b == Backend::Webgpu { "Runs on WebGPU." } else { "Runs on the CPU." };
            let notice = notice.map(|n| view! { " " <span class="notice">{n}</span> });
            view! { <p class="muted inside-backend">{on}{notice}</p> }
        })
    };
    let body = move || {
        let a = answer.get()?;
        let gs = shown.get();
        let sel = cell.get();
        let tables = gs
            .iter()
            .enumerate()
            .map(|(g, grid)| {
                let selected = sel.filter(|s| s.0 == g).map(|s| (s.1, s.2));
                view! { <GridTable grid=grid.clone() selected=selected pick=move |r, c| pick(g, r, c)/> }
            })
            .collect_view();
        let more = params.with(|p| details(&a, p, sel, &gs));
        let hint = params.with(|p| p.tool == Tool::Lens && sel.is_none())
            .then(|| view! {
                <p class="muted">"Click a token in the first grid to follow its probability in the second."</p>
            });
        Some(view! {
            {patch_line(&a).map(|l| view! { <p class="inside-metric">{l}</p> })}
            {hint}
            <div class="inside-grids">{tables}</div>
            {more}
        })
    };
    view! {
        <div class="inside" data-tool=move || params.with(|p| p.tool.key())
            data-answered=move || answer.with(Option::is_some).to_string()>
            {status}
            {backend_line}
            {body}
            <canvas node_ref=canvas class="plot" role="img" hidden=move || answer.with(Option::is_none)
                aria-label="The grids' story against the layers"></canvas>
        </div>
    }
    .into_any()
}
