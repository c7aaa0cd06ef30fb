//! Terminal styling that can be switched off (`--color never`, NO_COLOR, pipes).

use anstyle::{AnsiColor, Effects, Style as S};

/// Applies ANSI styles when colour is on; returns text unchanged otherwise.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    color: bool,
    lang: crate::cli::i18n::Lang,
}

impl Style {
    /// Colours on or off; English.
    pub fn new(color: bool) -> Self {
        Self {
            color,
            lang: crate::cli::i18n::Lang::En,
        }
    }

    /// The same style, speaking `lang` in the reports.
    pub fn with_lang(self, lang: crate::cli::i18n::Lang) -> Self {
        Self { lang, ..self }
    }

    /// Whether colours are on.
    pub fn color(&self) -> bool {
        self.color
    }

    /// The language of the reports.
    pub fn lang(&self) -> crate::cli::i18n::Lang {
        self.lang
    }

    /// The reports' fixed words in that language.
    pub fn words(&self) -> &'static crate::cli::i18n::Report {
        self.lang.report()
    }

    fn paint(&self, style: S, text: &str) -> String {
        if self.color {
            format!("{}{text}{}", style.render(), style.render_reset())
        } else {
            text.to_owned()
        }
    }

    /// Section headings.
    pub fn heading(&self, text: &str) -> String {
        self.paint(S::new().effects(Effects::BOLD), text)
    }

    /// Good news.
    pub fn good(&self, text: &str) -> String {
        self.paint(S::new().fg_color(Some(AnsiColor::Green.into())), text)
    }

    /// Warnings.
    pub fn warn(&self, text: &str) -> String {
        self.paint(S::new().fg_color(Some(AnsiColor::Yellow.into())), text)
    }

    /// Errors.
    pub fn bad(&self, text: &str) -> String {
        self.paint(
            S::new()
                .fg_color(Some(AnsiColor::Red.into()))
                .effects(Effects::BOLD),
            text,
        )
    }

    /// Secondary detail.
    pub fn dim(&self, text: &str) -> String {
        self.paint(S::new().effects(Effects::DIMMED), text)
    }
}
