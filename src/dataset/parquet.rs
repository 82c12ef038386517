//! Writes dataset rows as a Parquet file in verl's schema (arrow arrays, `ArrowWriter`):
//!
//! ```text
//! data_source  string
//! prompt       list<struct<role: string, content: string>>
//! ability      string
//! reward_model struct<style: string, ground_truth: string>
//! extra_info   struct<split: string, index: int64, ops: list<string>, level: int64,
//!                     flops: int64, num_ops: int64, source: string, mode: string,
//!                     entry_point: string>
//! ```

use super::DatasetRow;
use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::{ArrayRef, Int64Array, ListArray, RecordBatch, StringArray, StructArray};
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType, Field, Fields, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use std::path::Path;
use std::sync::Arc;

fn strings<'a>(items: impl Iterator<Item = &'a str>) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(items))
}

fn message_fields() -> Fields {
    Fields::from(vec![
        Field::new("role", DataType::Utf8, false),
        Field::new("content", DataType::Utf8, false),
    ])
}

fn reward_fields() -> Fields {
    Fields::from(vec![
        Field::new("style", DataType::Utf8, false),
        Field::new("ground_truth", DataType::Utf8, false),
    ])
}

fn ops_type() -> DataType {
    DataType::List(Arc::new(Field::new("item", DataType::Utf8, true)))
}

fn extra_fields() -> Fields {
    Fields::from(vec![
        Field::new("split", DataType::Utf8, false),
        Field::new("index", DataType::Int64, false),
        Field::new("ops", ops_type(), false),
        Field::new("level", DataType::Int64, false),
        Field::new("flops", DataType::Int64, false),
        Field::new("num_ops", DataType::Int64, false),
        Field::new("source", DataType::Utf8, false),
        Field::new("mode", DataType::Utf8, false),
        Field::new("entry_point", DataType::Utf8, false),
    ])
}

/// The Arrow schema of a dataset file.
pub fn schema() -> Schema {
    let message = DataType::Struct(message_fields());
    Schema::new(vec![
        Field::new("data_source", DataType::Utf8, false),
        Field::new(
            "prompt",
            DataType::List(Arc::new(Field::new("item", message, false))),
            false,
        ),
        Field::new("ability", DataType::Utf8, false),
        Field::new("reward_model", DataType::Struct(reward_fields()), false),
        Field::new("extra_info", DataType::Struct(extra_fields()), false),
    ])
}

/// The rows as one record batch of [`schema`].
pub fn record_batch(rows: &[DatasetRow]) -> Result<RecordBatch, String> {
    let err = |e: arrow_schema::ArrowError| e.to_string();
    let messages: Vec<&drtc_llm::ChatMessage> = rows.iter().flat_map(|r| r.prompt.iter()).collect();
    let message_struct = StructArray::try_new(
        message_fields(),
        vec![
            strings(messages.iter().map(|m| m.role.as_str())),
            strings(messages.iter().map(|m| m.content.as_str())),
        ],
        None,
    )
    .map_err(err)?;
    let prompt = ListArray::try_new(
        Arc::new(Field::new(
            "item",
            DataType::Struct(message_fields()),
            false,
        )),
        OffsetBuffer::from_lengths(rows.iter().map(|r| r.prompt.len())),
        Arc::new(message_struct),
        None,
    )
    .map_err(err)?;
    let reward = StructArray::try_new(
        reward_fields(),
        vec![
            strings(rows.iter().map(|_| "rule")),
            strings(rows.iter().map(|r| r.ground_truth.as_str())),
        ],
        None,
    )
    .map_err(err)?;
    let mut ops = ListBuilder::new(StringBuilder::new());
    for r in rows {
        for op in &r.ops {
            ops.values().append_value(op);
        }
        ops.append(true);
    }
    let int = |f: &dyn Fn(&DatasetRow) -> i64| -> ArrayRef {
        Arc::new(Int64Array::from_iter_values(rows.iter().map(f)))
    };
    let extra = StructArray::try_new(
        extra_fields(),
        vec![
            strings(rows.iter().map(|r| r.split.as_str())),
            int(&|r| r.index as i64),
            Arc::new(ops.finish()),
            int(&|r| i64::from(r.level)),
            int(&|r| i64::try_from(r.flops).unwrap_or(i64::MAX)),
            int(&|r| r.num_ops as i64),
            strings(rows.iter().map(|r| r.source.as_str())),
            strings(rows.iter().map(|r| r.mode.as_str())),
            strings(rows.iter().map(|r| r.entry_point.as_str())),
        ],
        None,
    )
    .map_err(err)?;
    RecordBatch::try_new(
        Arc::new(schema()),
        vec![
            strings(rows.iter().map(|r| r.data_source.as_str())),
            Arc::new(prompt),
            strings(rows.iter().map(|r| r.ability.as_str())),
            Arc::new(reward),
            Arc::new(extra),
        ],
    )
    .map_err(err)
}

/// Writes `rows` to `path` (snappy-compressed Parquet).
pub fn write(rows: &[DatasetRow], path: &Path) -> Result<(), String> {
    let batch = record_batch(rows)?;
    let file = std::fs::File::create(path)
        .map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .build();
    let mut w = ArrowWriter::try_new(file, batch.schema(), Some(props))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    w.write(&batch)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    w.close().map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(())
}
