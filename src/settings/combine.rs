//! Layering answers: the first layer that gives one wins (uv's `Combine`).

/// Two layers of the same answers made one: `self` is the stronger layer (flags over the
/// environment, the environment over the config file), `other` fills what it leaves open.
pub trait Combine {
    /// `self`'s answers where it has them, else `other`'s.
    #[must_use]
    fn combine(self, other: Self) -> Self;
}

impl<T> Combine for Option<T> {
    fn combine(self, other: Self) -> Self {
        self.or(other)
    }
}

/// Implements [`Combine`] field by field for a struct of `Option`s.
macro_rules! combine_fields {
    ($ty:ty { $($field:ident),* $(,)? }) => {
        impl $crate::settings::combine::Combine for $ty {
            fn combine(self, other: Self) -> Self {
                Self { $($field: $crate::settings::combine::Combine::combine(self.$field, other.$field)),* }
            }
        }
    };
}
pub(crate) use combine_fields;

#[cfg(test)]
mod tests {
    use super::Combine;

    #[derive(Debug, Default, PartialEq)]
    struct Two {
        a: Option<u8>,
        b: Option<u8>,
    }
    combine_fields!(Two { a, b });

    #[test]
    fn the_stronger_layer_wins_and_the_weaker_fills_in() {
        let flags = Two {
            a: Some(1),
            b: None,
        };
        let file = Two {
            a: Some(2),
            b: Some(3),
        };
        assert_eq!(
            flags.combine(file),
            Two {
                a: Some(1),
                b: Some(3)
            }
        );
        assert_eq!(Two::default().combine(Two::default()), Two::default());
    }
}
