//! Parses `key = value` configuration files with `[section]` headers.
//!
//! Lines starting with `#` are comments; values may be quoted to keep
//! leading or trailing spaces. Errors name the line they were found on.

use std::collections::HashMap;
use std::fmt;

#[derive(Debug, PartialEq)]
pub enum ConfigError {
    MissingEquals { line: usize },
    EmptyKey { line: usize },
    UnterminatedQuote { line: usize },
    UnclosedSection { line: usize },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::MissingEquals { line } => write!(f, "line {line}: expected `key = value`"),
            ConfigError::EmptyKey { line } => write!(f, "line {line}: empty key"),
            ConfigError::UnterminatedQuote { line } => write!(f, "line {line}: unterminated quote"),
            ConfigError::UnclosedSection { line } => write!(f, "line {line}: missing `]`"),
        }
    }
}

impl std::error::Error for ConfigError {}

/// Section name -> (key -> value). Keys outside any section go under "".
pub type Config = HashMap<String, HashMap<String, String>>;

pub fn parse(text: &str) -> Result<Config, ConfigError> {
    let mut config = Config::new();
    let mut section = String::new();
    for (n, raw) in text.lines().enumerate() {
        let line = n + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix('[') {
            let name = rest.strip_suffix(']').ok_or(ConfigError::UnclosedSection { line })?;
            section = name.trim().to_string();
            continue;
        }
        let (key, value) = trimmed.split_once('=').ok_or(ConfigError::MissingEquals { line })?;
        let key = key.trim();
        if key.is_empty() {
            return Err(ConfigError::EmptyKey { line });
        }
        let value = unquote(value.trim(), line)?;
        config.entry(section.clone()).or_default().insert(key.to_string(), value);
    }
    Ok(config)
}

fn unquote(value: &str, line: usize) -> Result<String, ConfigError> {
    match value.strip_prefix('"') {
        Some(rest) => rest
            .strip_suffix('"')
            .map(str::to_string)
            .ok_or(ConfigError::UnterminatedQuote { line }),
        None => Ok(value.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_and_quotes() {
        let c = parse("name = demo\n[server]\nhost = \"  0.0.0.0 \"\nport=8080\n").unwrap();
        assert_eq!(c[""]["name"], "demo");
        assert_eq!(c["server"]["host"], "  0.0.0.0 ");
        assert_eq!(parse("[oops\n"), Err(ConfigError::UnclosedSection { line: 1 }));
    }
}
