//! The hand-written bindings against the C headers.

use super::*;

/// The hand-written layouts of `bindings.rs` against the headers' `offsetof`/`sizeof`,
/// where the headers (libfabric-dev) and a C compiler are installed.
#[test]
fn layouts_match_the_headers() {
    use bindings::*;
    use std::mem::{offset_of, size_of};
    let _w = watchdog("layouts_match_the_headers", 60);
    if !std::path::Path::new("/usr/include/rdma/fi_atomic.h").exists() {
        eprintln!("skipped: libfabric's headers are not installed (libfabric-dev)");
        return;
    }
    macro_rules! fields {
        ($($s:ident { $($f:ident $(= $c:ident)?),* }),* $(,)?) => {
            vec![$(
                (stringify!($s).to_string(), "sizeof".to_string(), size_of::<$s>()),
                $((stringify!($s).to_string(), fields!(@c $f $($c)?), offset_of!($s, $f)),)*
            )*]
        };
        (@c $f:ident) => { stringify!($f).to_string() };
        (@c $f:ident $c:ident) => { stringify!($c).to_string() };
    }
    let rust = fields![
        fi_ops { size, close, bind, control, ops_set },
        fid { fclass, context, ops },
        fi_tx_attr { op_flags, msg_order, inject_size, tclass },
        fi_rx_attr { caps, iov_limit },
        fi_ep_attr { type_ = type, protocol, max_msg_size, auth_key },
        fi_domain_attr { name, threading, data_progress, av_type, mr_mode, mr_key_size, caps, tclass },
        fi_fabric_attr { name, prov_name, prov_version, api_version },
        fi_info { next, caps, mode, addr_format, src_addrlen, handle, tx_attr, ep_attr, domain_attr, fabric_attr, nic },
        fi_ops_fabric { domain, trywait, domain2 },
        fid_fabric { fid, ops, api_version },
        fi_av_attr { type_ = type, count, name, flags },
        fi_cq_attr { size, flags, format, wait_obj, wait_cond, wait_set },
        fi_cntr_attr { events, wait_obj, wait_set, flags },
        fi_atomic_attr { count, size },
        fi_ops_domain { av_open, cq_open, endpoint, cntr_open, query_atomic, endpoint2 },
        fi_ops_mr { reg, regattr },
        fid_domain { fid, ops, mr },
        fi_ops_av { insert, av_set },
        fid_av { fid, ops },
        fid_mr { fid, mem_desc, key },
        fi_ops_ep { cancel, tx_size_left },
        fi_ops_cm { getname, join },
        fi_rma_iov { addr, len, key },
        fi_msg_rma { msg_iov, desc, iov_count, addr, rma_iov, rma_iov_count, context, data },
        fi_ioc { addr, count },
        fi_rma_ioc { addr, count, key },
        fi_msg_atomic { msg_iov, iov_count, addr, rma_iov, rma_iov_count, datatype, op, context, data },
        fi_ops_rma { read, write, writemsg, inject, injectdata },
        fi_ops_atomic { write, writemsg, inject, readwrite, compwrite, compwritevalid },
        fid_ep { fid, ops, cm, msg, rma, atomic, collective },
        fi_msg { msg_iov, desc, iov_count, addr, context, data },
        fi_ops_msg { recv, recvmsg, send, sendmsg, inject, injectdata },
        fi_cq_msg_entry { op_context, flags, len },
        fi_cq_data_entry { op_context, flags, len, buf, data },
        fi_cq_err_entry { flags, olen, err, prov_errno, err_data, err_data_size },
        fi_ops_cq { read, readerr, sread, signal, strerror },
        fid_cq { fid, ops },
        fi_ops_cntr { read, readerr, wait, seterr },
        fid_cntr { fid, ops },
        fi_cq_entry { op_context },
    ];
    let consts: Vec<(&str, i128)> = vec![
        ("FI_RMA", FI_RMA.into()),
        ("FI_ATOMIC", FI_ATOMIC.into()),
        ("FI_READ", FI_READ.into()),
        ("FI_WRITE", FI_WRITE.into()),
        ("FI_RECV", FI_RECV.into()),
        ("FI_TRANSMIT", FI_TRANSMIT.into()),
        ("FI_REMOTE_READ", FI_REMOTE_READ.into()),
        ("FI_REMOTE_WRITE", FI_REMOTE_WRITE.into()),
        ("FI_DELIVERY_COMPLETE", FI_DELIVERY_COMPLETE.into()),
        ("FI_INJECT", FI_INJECT.into()),
        ("FI_SELECTIVE_COMPLETION", FI_SELECTIVE_COMPLETION.into()),
        ("FI_FETCH_ATOMIC", FI_FETCH_ATOMIC.into()),
        ("FI_COMPARE_ATOMIC", FI_COMPARE_ATOMIC.into()),
        ("FI_MR_VIRT_ADDR", FI_MR_VIRT_ADDR.into()),
        ("FI_MR_ALLOCATED", FI_MR_ALLOCATED.into()),
        ("FI_MR_PROV_KEY", FI_MR_PROV_KEY.into()),
        ("FI_MR_LOCAL", FI_MR_LOCAL.into()),
        ("FI_MR_ENDPOINT", FI_MR_ENDPOINT.into()),
        ("FI_ORDER_WAW", FI_ORDER_WAW.into()),
        ("FI_ORDER_SAS", FI_ORDER_SAS.into()),
        ("FI_MSG", FI_MSG.into()),
        ("FI_SEND", FI_SEND.into()),
        ("FI_COMPLETION", FI_COMPLETION.into()),
        ("FI_CQ_FORMAT_MSG", FI_CQ_FORMAT_MSG.into()),
        ("FI_CQ_FORMAT_DATA", FI_CQ_FORMAT_DATA.into()),
        ("FI_REMOTE_CQ_DATA", FI_REMOTE_CQ_DATA.into()),
        ("FI_EP_RDM", FI_EP_RDM.into()),
        ("FI_AV_TABLE", FI_AV_TABLE.into()),
        ("FI_PROGRESS_MANUAL", FI_PROGRESS_MANUAL.into()),
        ("FI_THREAD_SAFE", FI_THREAD_SAFE.into()),
        ("FI_WAIT_UNSPEC", FI_WAIT_UNSPEC.into()),
        ("FI_WAIT_FD", FI_WAIT_FD.into()),
        ("FI_GETWAIT", FI_GETWAIT.into()),
        ("FI_CQ_FORMAT_CONTEXT", FI_CQ_FORMAT_CONTEXT.into()),
        ("FI_ENABLE", FI_ENABLE.into()),
        ("FI_INT32", FI_INT32.into()),
        ("FI_UINT64", FI_UINT64.into()),
        ("FI_FLOAT", FI_FLOAT.into()),
        ("FI_DOUBLE", FI_DOUBLE.into()),
        ("FI_MIN", FI_MIN.into()),
        ("FI_SUM", FI_SUM.into()),
        ("FI_BOR", FI_BOR.into()),
        ("FI_BAND", FI_BAND.into()),
        ("FI_BXOR", FI_BXOR.into()),
        ("FI_ATOMIC_READ", FI_ATOMIC_READ.into()),
        ("FI_ATOMIC_WRITE", FI_ATOMIC_WRITE.into()),
        ("FI_CSWAP", FI_CSWAP.into()),
        ("FI_EAGAIN", FI_EAGAIN.into()),
        ("FI_ENODATA", FI_ENODATA.into()),
        ("FI_ETOOSMALL", FI_ETOOSMALL.into()),
        ("FI_EAVAIL", FI_EAVAIL.into()),
        ("FABRIC_MAJOR_MINOR_GE_1_17", 1),
    ];
    let mut c = String::from(
        "#include <stdio.h>\n#include <stddef.h>\n#include <rdma/fabric.h>\n\
         #include <rdma/fi_domain.h>\n#include <rdma/fi_endpoint.h>\n#include <rdma/fi_cm.h>\n\
         #include <rdma/fi_rma.h>\n#include <rdma/fi_atomic.h>\n#include <rdma/fi_eq.h>\n\
         #include <rdma/fi_errno.h>\n\
         #define FABRIC_MAJOR_MINOR_GE_1_17 (FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION) >= FI_VERSION(1, 17))\n\
         int main(void) {\n",
    );
    for (s, f, _) in &rust {
        if f == "sizeof" {
            c += &format!("printf(\"{s} sizeof %zu\\n\", sizeof(struct {s}));\n");
        } else {
            c += &format!("printf(\"{s} {f} %zu\\n\", offsetof(struct {s}, {f}));\n");
        }
    }
    for (n, _) in &consts {
        c += &format!("printf(\"const {n} %lld\\n\", (long long)({n}));\n");
    }
    c += "return 0; }\n";
    let dir = std::env::temp_dir().join(format!("rshmem-ofi-layout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (src, exe) = (dir.join("layout.c"), dir.join("layout"));
    std::fs::write(&src, c).unwrap();
    let cc = std::process::Command::new("cc")
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .output();
    let cc = match cc {
        Ok(o) => o,
        Err(e) => {
            eprintln!("skipped: no C compiler ({e})");
            let _ = std::fs::remove_dir_all(&dir);
            return;
        }
    };
    assert!(
        cc.status.success(),
        "cc failed: {}",
        String::from_utf8_lossy(&cc.stderr)
    );
    let out = std::process::Command::new(&exe).output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    for (s, f, v) in &rust {
        let l = lines.next().expect("a line per field");
        assert_eq!(l, format!("{s} {f} {v}"), "layout of struct {s}");
    }
    for (n, v) in &consts {
        let l = lines.next().expect("a line per constant");
        assert_eq!(l, format!("const {n} {v}"), "constant {n}");
    }
}
