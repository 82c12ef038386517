//! GPU discovery through the CUDA driver API (cudarc, loaded dynamically), without
//! importing torch: fast, and usable where no Python exists. The pool pins one worker
//! per GPU found here.

use cudarc::driver::{result, sys};
use serde::Serialize;

/// One CUDA device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GpuInfo {
    /// CUDA ordinal (as `CUDA_VISIBLE_DEVICES` numbers it).
    pub ordinal: u32,
    pub name: String,
    pub total_memory_bytes: u64,
    pub sm_count: u32,
    pub compute_capability: (u32, u32),
}

/// What the machine has.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum DeviceScan {
    Gpus(Vec<GpuInfo>),
    /// No usable GPU, and why (CPU mode applies).
    None {
        reason: String,
    },
}

/// Lists the GPUs visible to this process.
pub fn scan() -> DeviceScan {
    // SAFETY: only tries to open the driver library; cudarc's other entry points panic
    // when it is absent, so nothing else is called before this check.
    if !unsafe { sys::is_culib_present() } {
        return DeviceScan::None {
            reason: "no CUDA driver library (libcuda.so) found".into(),
        };
    }
    if let Err(e) = result::init() {
        return DeviceScan::None {
            reason: format!("the CUDA driver failed to initialize: {e:?}"),
        };
    }
    let count = match result::device::get_count() {
        Ok(n) => n,
        Err(e) => {
            return DeviceScan::None {
                reason: format!("cannot count CUDA devices: {e:?}"),
            }
        }
    };
    if count == 0 {
        return DeviceScan::None {
            reason: "the CUDA driver reports no device".into(),
        };
    }
    let mut gpus = Vec::new();
    for ordinal in 0..count {
        match gpu_info(ordinal) {
            Ok(g) => gpus.push(g),
            Err(e) => {
                return DeviceScan::None {
                    reason: format!("cannot query CUDA device {ordinal}: {e:?}"),
                }
            }
        }
    }
    DeviceScan::Gpus(gpus)
}

fn gpu_info(ordinal: i32) -> Result<GpuInfo, result::DriverError> {
    use sys::CUdevice_attribute as A;
    let dev = result::device::get(ordinal)?;
    let name = result::device::get_name(dev)?;
    // SAFETY: `dev` comes from `device::get`.
    let (mem, sms, major, minor) = unsafe {
        (
            result::device::total_mem(dev)?,
            result::device::get_attribute(dev, A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            result::device::get_attribute(dev, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            result::device::get_attribute(dev, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        )
    };
    Ok(GpuInfo {
        ordinal: ordinal as u32,
        name,
        total_memory_bytes: mem as u64,
        sm_count: sms as u32,
        compute_capability: (major as u32, minor as u32),
    })
}
