//! podunavailablebudget conversion: filled in by the kind's author.
