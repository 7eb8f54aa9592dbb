//! `CanvasBackend` with one change: text is measured with the canvas's own `measureText`.
//! plotters' wasm font code measures each label by appending a `<span>` to the page and
//! reading its `offsetHeight`, which forces a layout of the whole page per label; on a long
//! chapter that was most of a plot's drawing time. Everything else is delegated unchanged.

use plotters::prelude::*;
use plotters_backend::{BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind};
use plotters_canvas::CanvasBackend;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

type Error = <CanvasBackend as DrawingBackend>::ErrorType;
type Res<T> = Result<T, DrawingErrorKind<Error>>;

pub struct FastCanvas {
    inner: CanvasBackend,
    ctx: CanvasRenderingContext2d,
}

impl FastCanvas {
    pub fn new(canvas: &HtmlCanvasElement) -> Option<Self> {
        let ctx = super::heatmap::context(canvas).ok()?;
        Some(FastCanvas { inner: CanvasBackend::with_canvas_object(canvas.clone())?, ctx })
    }
}

impl DrawingBackend for FastCanvas {
    type ErrorType = Error;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }
    fn ensure_prepared(&mut self) -> Res<()> {
        self.inner.ensure_prepared()
    }
    fn present(&mut self) -> Res<()> {
        self.inner.present()
    }
    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Res<()> {
        self.inner.draw_pixel(point, color)
    }
    fn draw_line<S: BackendStyle>(&mut self, from: BackendCoord, to: BackendCoord, style: &S) -> Res<()> {
        self.inner.draw_line(from, to, style)
    }
    fn draw_rect<S: BackendStyle>(&mut self, ul: BackendCoord, br: BackendCoord, style: &S, fill: bool) -> Res<()> {
        self.inner.draw_rect(ul, br, style, fill)
    }
    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(&mut self, path: I, style: &S) -> Res<()> {
        self.inner.draw_path(path, style)
    }
    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(&mut self, vert: I, style: &S) -> Res<()> {
        self.inner.fill_polygon(vert, style)
    }
    fn draw_circle<S: BackendStyle>(&mut self, center: BackendCoord, radius: u32, style: &S, fill: bool) -> Res<()> {
        self.inner.draw_circle(center, radius, style, fill)
    }
    fn draw_text<S: BackendTextStyle>(&mut self, text: &str, style: &S, pos: BackendCoord) -> Res<()> {
        font_of(style); // interned before CanvasBackend::draw_text sends it
        self.inner.draw_text(text, style, pos)
    }

    fn estimate_text_size<S: BackendTextStyle>(&self, text: &str, style: &S) -> Res<(u32, u32)> {
        self.ctx.set_font(&font_of(style));
        let width =
            self.ctx.measure_text(text).map(|m| m.width()).unwrap_or(style.size() * 0.6 * text.chars().count() as f64);
        // A line box is about 1.2 em tall, as the span measurement gave.
        Ok((width.ceil() as u32, (style.size() * 1.2).ceil() as u32))
    }
}

/// The font string CanvasBackend::draw_text sets for `style`, interned (see `interned`).
fn font_of<S: BackendTextStyle>(style: &S) -> String {
    super::interned::font(format!("{} {}px {}", style.style().as_str(), style.size(), style.family().as_str()))
}
