//! One small interface over the two engines the store supports: SQLite (embedded, the
//! default) and PostgreSQL (a server shared by a team or a fleet). Statements are written
//! once, in SQL both accept (`INSERT ... ON CONFLICT`), with `?N` placeholders that become
//! `$N` for PostgreSQL; only the DDL and the schema-version bookkeeping differ.

use crate::StoreError;

/// A parameter or column value.
#[derive(Debug, Clone, PartialEq)]
pub enum Param {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl Param {
    pub fn text(&self) -> Option<String> {
        match self {
            Param::Text(s) => Some(s.clone()),
            Param::Int(i) => Some(i.to_string()),
            _ => None,
        }
    }
    pub fn int(&self) -> Option<i64> {
        match self {
            Param::Int(i) => Some(*i),
            Param::Real(f) => Some(*f as i64),
            _ => None,
        }
    }
}

impl From<&str> for Param {
    fn from(s: &str) -> Param {
        Param::Text(s.to_string())
    }
}
impl From<String> for Param {
    fn from(s: String) -> Param {
        Param::Text(s)
    }
}
impl From<i64> for Param {
    fn from(i: i64) -> Param {
        Param::Int(i)
    }
}
impl<T: Into<Param>> From<Option<T>> for Param {
    fn from(v: Option<T>) -> Param {
        v.map(Into::into).unwrap_or(Param::Null)
    }
}
impl From<Vec<u8>> for Param {
    fn from(b: Vec<u8>) -> Param {
        Param::Blob(b)
    }
}

/// An open connection to either engine.
pub enum Db {
    Lite(rusqlite::Connection),
    Pg(Box<postgres::Client>),
}

fn pg_sql(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '?' && chars.peek().is_some_and(|d| d.is_ascii_digit()) {
            out.push('$');
        } else {
            out.push(c);
        }
    }
    out
}

fn pg_err(e: postgres::Error) -> StoreError {
    StoreError::Server(pg_message(&e))
}

/// A PostgreSQL error in one line: the server's own message (`FATAL: password
/// authentication failed for user "bench"`), or the client's error with its causes
/// (`invalid configuration: password missing`).
pub fn pg_message(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{}: {}", db.severity(), db.message());
    }
    let mut msg = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        msg.push_str(": ");
        msg.push_str(&c.to_string());
        cause = c.source();
    }
    msg
}

fn pg_params(
    types: &[postgres::types::Type],
    params: &[Param],
) -> Result<Vec<Box<dyn postgres::types::ToSql + Sync>>, StoreError> {
    use postgres::types::Type;
    types
        .iter()
        .zip(params)
        .map(|(t, p)| -> Result<Box<dyn postgres::types::ToSql + Sync>, StoreError> {
            Ok(match *t {
                Type::INT8 => Box::new(p.int()),
                Type::INT4 => Box::new(p.int().map(|i| i as i32)),
                Type::FLOAT8 => Box::new(match p {
                    Param::Real(f) => Some(*f),
                    Param::Int(i) => Some(*i as f64),
                    _ => None,
                }),
                Type::TEXT | Type::VARCHAR => Box::new(match p {
                    Param::Null => None,
                    other => other.text(),
                }),
                Type::BYTEA => Box::new(match p {
                    Param::Blob(b) => Some(b.clone()),
                    _ => None,
                }),
                ref other => {
                    return Err(StoreError::Decode(format!(
                        "unsupported PostgreSQL parameter type {other}"
                    )))
                }
            })
        })
        .collect()
}

impl Db {
    pub fn is_pg(&self) -> bool {
        matches!(self, Db::Pg(_))
    }

    /// Runs several statements without parameters.
    pub fn batch(&mut self, sql: &str) -> Result<(), StoreError> {
        match self {
            Db::Lite(c) => Ok(c.execute_batch(sql)?),
            Db::Pg(c) => c.batch_execute(sql).map_err(pg_err),
        }
    }

    /// Runs one statement.
    pub fn execute(&mut self, sql: &str, params: &[Param]) -> Result<(), StoreError> {
        match self {
            Db::Lite(c) => {
                let values: Vec<rusqlite::types::Value> = params.iter().map(lite_value).collect();
                c.execute(sql, rusqlite::params_from_iter(values))?;
                Ok(())
            }
            Db::Pg(c) => {
                let st = c.prepare(&pg_sql(sql)).map_err(pg_err)?;
                let boxed = pg_params(st.params(), params)?;
                let refs: Vec<&(dyn postgres::types::ToSql + Sync)> = boxed.iter().map(|b| b.as_ref()).collect();
                c.execute(&st, &refs).map_err(pg_err)?;
                Ok(())
            }
        }
    }

    /// Runs a query and returns every row as values.
    pub fn query(&mut self, sql: &str, params: &[Param]) -> Result<Vec<Vec<Param>>, StoreError> {
        match self {
            Db::Lite(c) => {
                let values: Vec<rusqlite::types::Value> = params.iter().map(lite_value).collect();
                let mut st = c.prepare(sql)?;
                let n = st.column_count();
                let rows = st.query_map(rusqlite::params_from_iter(values), |r| {
                    (0..n)
                        .map(|i| r.get_ref(i).map(lite_param))
                        .collect::<Result<Vec<_>, _>>()
                })?;
                Ok(rows.collect::<Result<Vec<_>, _>>()?)
            }
            Db::Pg(c) => {
                use postgres::types::Type;
                let st = c.prepare(&pg_sql(sql)).map_err(pg_err)?;
                let boxed = pg_params(st.params(), params)?;
                let refs: Vec<&(dyn postgres::types::ToSql + Sync)> = boxed.iter().map(|b| b.as_ref()).collect();
                let rows = c.query(&st, &refs).map_err(pg_err)?;
                rows.iter()
                    .map(|r| {
                        r.columns()
                            .iter()
                            .enumerate()
                            .map(|(i, col)| -> Result<Param, StoreError> {
                                let p = match *col.type_() {
                                    Type::INT8 => r.try_get::<_, Option<i64>>(i).map(|v| v.map(Param::Int)),
                                    Type::INT4 => {
                                        r.try_get::<_, Option<i32>>(i).map(|v| v.map(|x| Param::Int(x.into())))
                                    }
                                    Type::FLOAT8 => r.try_get::<_, Option<f64>>(i).map(|v| v.map(Param::Real)),
                                    Type::BYTEA => r.try_get::<_, Option<Vec<u8>>>(i).map(|v| v.map(Param::Blob)),
                                    _ => r.try_get::<_, Option<String>>(i).map(|v| v.map(Param::Text)),
                                }
                                .map_err(pg_err)?;
                                Ok(p.unwrap_or(Param::Null))
                            })
                            .collect()
                    })
                    .collect()
            }
        }
    }

    /// Runs `f` inside a transaction: committed if it succeeds, rolled back otherwise.
    pub fn transaction<T>(&mut self, f: impl FnOnce(&mut Db) -> Result<T, StoreError>) -> Result<T, StoreError> {
        self.batch(if self.is_pg() { "BEGIN" } else { "BEGIN IMMEDIATE" })?;
        match f(self) {
            Ok(v) => {
                self.batch("COMMIT")?;
                Ok(v)
            }
            Err(e) => {
                let _ = self.batch("ROLLBACK");
                Err(e)
            }
        }
    }
}

fn lite_value(p: &Param) -> rusqlite::types::Value {
    use rusqlite::types::Value as V;
    match p {
        Param::Null => V::Null,
        Param::Int(i) => V::Integer(*i),
        Param::Real(f) => V::Real(*f),
        Param::Text(s) => V::Text(s.clone()),
        Param::Blob(b) => V::Blob(b.clone()),
    }
}

fn lite_param(v: rusqlite::types::ValueRef<'_>) -> Param {
    use rusqlite::types::ValueRef as V;
    match v {
        V::Null => Param::Null,
        V::Integer(i) => Param::Int(i),
        V::Real(f) => Param::Real(f),
        V::Text(t) => Param::Text(String::from_utf8_lossy(t).into_owned()),
        V::Blob(b) => Param::Blob(b.to_vec()),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn placeholders_become_dollar_numbers() {
        assert_eq!(
            super::pg_sql("SELECT ?1, '?', ?12 WHERE a = ?2"),
            "SELECT $1, '?', $12 WHERE a = $2"
        );
    }
}
