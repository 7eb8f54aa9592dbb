//! A picture to the pixels a ViT reads, as the checkpoint's `preprocessor_config.json` says and
//! `transformers`' image processors do it with their PIL backend: resize (to a height and width,
//! or the shortest edge to a length), centre crop, rescale (× 1/255 in f64, then f32) and normalise
//! ((x − mean) / std in f32), channels first.

use ndarray::{s, Array3, ArrayView3};

use crate::formats::LoadError;
use crate::model::fields::Fields;
use crate::numerics::resample::{resize, Filter};

/// The largest side a picture may have (a 16-megapixel photo is about 4,900 × 3,300).
pub const MAX_SIDE: usize = 8192;

/// How `size` asks to resize.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Size {
    /// Exactly this (height, width).
    Exact(usize, usize),
    /// The shorter side to this length, the other in proportion.
    ShortestEdge(usize),
}

/// The image processor's settings (`preprocessor_config.json`).
#[derive(Debug, Clone, PartialEq)]
pub struct Processor {
    pub resize: Option<(Size, Filter)>,
    /// (height, width)
    pub crop: Option<(usize, usize)>,
    pub rescale: Option<f64>,
    /// (mean, std) per channel.
    pub normalize: Option<([f32; 3], [f32; 3])>,
}

impl Processor {
    /// Reads `preprocessor_config.json`; what it cannot do is refused, naming the field.
    pub fn from_json(text: &str) -> Result<Self, LoadError> {
        let raw = Fields::object(text)?;
        let r = Fields(&raw);
        let refuse = |what: String| LoadError::Config(format!("preprocessor_config.json: {what}"));
        let side = |v: &serde_json::Value, key: &str| -> Result<usize, LoadError> {
            v.as_u64()
                .map(|n| n as usize)
                .filter(|&n| (1..=MAX_SIDE).contains(&n))
                .ok_or_else(|| refuse(format!("`{key}` is not a size in pixels")))
        };
        // A number (a square), or {"height", "width"}, or {"shortest_edge"} (only for `size`).
        let dims = |key: &str, shortest: bool| -> Result<Option<Size>, LoadError> {
            let Some(v) = raw.get(key) else { return Ok(None) };
            if v.is_number() {
                let n = side(v, key)?;
                return Ok(Some(Size::Exact(n, n)));
            }
            match (v.get("height"), v.get("width"), v.get("shortest_edge")) {
                (Some(h), Some(w), _) => Ok(Some(Size::Exact(side(h, key)?, side(w, key)?))),
                (_, _, Some(e)) if shortest && v.get("longest_edge").is_none() => {
                    Ok(Some(Size::ShortestEdge(side(e, key)?)))
                }
                _ => Err(refuse(format!(
                    "`{key}` is {v}, not a height and width{}",
                    if shortest { " or a shortest edge" } else { "" }
                ))),
            }
        };
        let on = |key: &str| -> Result<bool, LoadError> { Ok(r.flag(key)?.unwrap_or(true)) };
        let resize = if on("do_resize")? {
            let size = dims("size", true)?.ok_or_else(|| refuse("`size` is missing".into()))?;
            // Without `resample`, the processor's own default: DeiT's is bicubic, ViT's bilinear.
            let deit = r.text("image_processor_type")?.is_some_and(|t| t.starts_with("DeiT"));
            let filter = match r.number("resample")? {
                None if deit => Filter::Bicubic,
                Some(2.0) | None => Filter::Bilinear,
                Some(3.0) => Filter::Bicubic,
                Some(n) => {
                    return Err(refuse(format!("resample = {n} is not supported (2, bilinear, and 3, bicubic, are)")))
                }
            };
            Some((size, filter))
        } else {
            None
        };
        let crop = if r.flag("do_center_crop")?.unwrap_or(false) {
            match dims("crop_size", false)?.ok_or_else(|| refuse("`crop_size` is missing".into()))? {
                Size::Exact(h, w) => Some((h, w)),
                Size::ShortestEdge(_) => None,
            }
        } else {
            None
        };
        let rescale = if on("do_rescale")? { Some(r.number("rescale_factor")?.unwrap_or(1.0 / 255.0)) } else { None };
        let triple = |key: &str| -> Result<[f32; 3], LoadError> {
            let v = raw.get(key).ok_or_else(|| refuse(format!("`{key}` is missing")))?;
            let xs: Vec<f32> = v
                .as_array()
                .map(|a| a.iter().filter_map(|x| x.as_f64()).map(|x| x as f32).collect())
                .unwrap_or_default();
            match xs[..] {
                [a, b, c] => Ok([a, b, c]),
                [a] => Ok([a; 3]),
                _ => Err(refuse(format!("`{key}` is not three numbers, one per colour"))),
            }
        };
        let normalize = if on("do_normalize")? {
            let (mean, std) = (triple("image_mean")?, triple("image_std")?);
            if std.iter().any(|&s| s.is_nan() || s <= 0.0) {
                return Err(refuse("`image_std` has a value that is not positive".into()));
            }
            Some((mean, std))
        } else {
            None
        };
        Ok(Processor { resize, crop, rescale, normalize })
    }

    /// The (height, width) the pixels come out at for a picture of (height, width).
    pub fn output_size(&self, (h, w): (usize, usize)) -> (usize, usize) {
        let resized = match self.resize {
            Some((Size::Exact(rh, rw), _)) => (rh, rw),
            // transformers: the short side to `e`, the long one to int(e · long / short).
            Some((Size::ShortestEdge(e), _)) => {
                let long = |a: usize, b: usize| (e as f64 * a as f64 / b as f64) as usize;
                if h <= w {
                    (e, long(w, h))
                } else {
                    (long(h, w), e)
                }
            }
            None => (h, w),
        };
        self.crop.unwrap_or(resized)
    }

    /// An RGB picture (height, width, 3) to the model's pixels (3, height, width). A picture
    /// smaller than the crop is refused with the reason.
    pub fn apply(&self, rgb: ArrayView3<u8>) -> Result<Array3<f32>, String> {
        let (h, w, ch) = rgb.dim();
        if ch != 3 {
            return Err(format!("the picture has {ch} colour channels, not 3 (red, green, blue)"));
        }
        if h == 0 || w == 0 || h > MAX_SIDE || w > MAX_SIDE {
            return Err(format!("the picture is {w} × {h} pixels: each side must be 1 to {MAX_SIDE}"));
        }
        // A resize to a shortest edge makes a thin picture's long side longer still: bounded too.
        let (rh, rw) = Processor { crop: None, ..self.clone() }.output_size((h, w));
        if rh > MAX_SIDE || rw > MAX_SIDE {
            return Err(format!(
                "the picture is {w} × {h} pixels, too thin: resized for the model it would be {rw} × {rh}, \
                 past {MAX_SIDE} on a side"
            ));
        }
        let resized = match self.resize {
            Some((size, filter)) => {
                let (rh, rw) = match size {
                    Size::Exact(rh, rw) => (rh, rw),
                    Size::ShortestEdge(_) => Processor { crop: None, ..self.clone() }.output_size((h, w)),
                };
                resize(rgb, (rh, rw), filter)
            }
            None => rgb.to_owned(),
        };
        let (rh, rw, _) = resized.dim();
        let cropped = match self.crop {
            Some((crop_h, crop_w)) if crop_h <= rh && crop_w <= rw => {
                let (top, left) = ((rh - crop_h) / 2, (rw - crop_w) / 2);
                resized.slice(s![top..top + crop_h, left..left + crop_w, ..]).to_owned()
            }
            Some((crop_h, crop_w)) => {
                let why = format!("smaller than the crop of {crop_w} × {crop_h}");
                return Err(format!("the picture is {rw} × {rh} after resizing, {why}"));
            }
            None => resized,
        };
        let (oh, ow, _) = cropped.dim();
        Ok(Array3::from_shape_fn((3, oh, ow), |(c, y, x)| {
            let v = f64::from(cropped[[y, x, c]]);
            let v = self.rescale.map_or(v, |s| v * s) as f32;
            match self.normalize {
                Some((mean, std)) => (v - mean[c]) / std[c],
                None => v,
            }
        }))
    }
}
