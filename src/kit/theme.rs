//! Light and dark themes. The page follows the system until the reader picks one with the
//! toggle; the choice is remembered in localStorage (`theme`). Canvas plots use `Palette`.

use leptos::prelude::{document, window};
use plotters::style::RGBColor;

use super::browser::{local_get, local_set};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Theme {
    Light,
    Dark,
}

impl Theme {
    /// The stored choice, else the system preference.
    pub fn initial() -> Theme {
        match local_get("theme").as_deref() {
            Some("dark") => Theme::Dark,
            Some("light") => Theme::Light,
            _ => {
                let dark = window()
                    .match_media("(prefers-color-scheme: dark)")
                    .ok()
                    .flatten()
                    .map(|m| m.matches())
                    .unwrap_or(false);
                if dark {
                    Theme::Dark
                } else {
                    Theme::Light
                }
            }
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }

    pub fn toggled(self) -> Theme {
        match self {
            Theme::Light => Theme::Dark,
            Theme::Dark => Theme::Light,
        }
    }

    /// Applies the theme to the page (`<html data-theme=…>`) and remembers it.
    pub fn apply(self, remember: bool) {
        if let Some(el) = document().document_element() {
            let _ = el.set_attribute("data-theme", self.name());
        }
        if remember {
            local_set("theme", self.name());
        }
    }

    pub fn palette(self) -> Palette {
        match self {
            Theme::Light => Palette {
                bg: RGBColor(255, 255, 255),
                fg: RGBColor(30, 32, 40),
                muted: RGBColor(110, 115, 128),
                grid: RGBColor(228, 230, 236),
                blue: RGBColor(37, 99, 235),
                orange: RGBColor(234, 88, 12),
                green: RGBColor(22, 140, 74),
                points: RGBColor(90, 96, 110),
            },
            Theme::Dark => Palette {
                bg: RGBColor(24, 26, 33),
                fg: RGBColor(226, 228, 234),
                muted: RGBColor(150, 155, 168),
                grid: RGBColor(52, 56, 68),
                blue: RGBColor(96, 165, 250),
                orange: RGBColor(251, 146, 60),
                green: RGBColor(74, 222, 128),
                points: RGBColor(170, 176, 190),
            },
        }
    }
}

/// Colours for plots, chosen for contrast on each theme's background.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Palette {
    pub bg: RGBColor,
    pub fg: RGBColor,
    pub muted: RGBColor,
    pub grid: RGBColor,
    pub blue: RGBColor,
    pub orange: RGBColor,
    pub green: RGBColor,
    pub points: RGBColor,
}
