/* Engine counters: one named counter at every discard and every notable
 * event.  X-macro: one line adds the field, its printable name and its
 * place in dumps.  Each stage owns a block; keep names stable (tests and
 * mnicctl print them). */
#ifndef ROCEV2_COUNTERS_H
#define ROCEV2_COUNTERS_H

#include <stdint.h>

#define ROCEV2_COUNTERS(X)                                                    \
	/* recv.c: demux and header checks */                                 \
	X(rx_frames)            /* every frame handed to rocev2_rx */          \
	X(rx_not_roce)          /* not IPv4 or IPv6/UDP/4791: ignored */        \
	X(rx_short)             /* truncated at any layer */                    \
	X(rx_bad_ip)            /* version/IHL/length/fragment/checksum */      \
	X(rx_bad_dst)           /* not our MAC / one of our GIDs */            \
	X(rx_bad_udp)           /* UDP length mismatch */                       \
	X(rx_bad_icrc)                                                         \
	X(rx_bad_tver)                                                         \
	X(rx_bad_opcode)        /* not an RC opcode we know */                  \
	X(rx_bad_pkey)                                                         \
	X(rx_bad_pad)           /* pad count or length inconsistent */         \
	X(rx_no_qp)             /* QPN this NIC never issued */                 \
	X(rx_stale_qp)          /* QPN of a QP since destroyed (late packet) */ \
	X(rx_bad_state)         /* QP state does not accept this packet */      \
	X(rx_bad_src)           /* source IP is not the QP's peer */            \
	X(rx_req_packets)       /* delivered to the responder */               \
	X(rx_resp_packets)      /* delivered to the completer */               \
	X(rx_ipv6_packets)      /* RoCEv2 over IPv6: UDP 4791 to one of our GIDs */ \
	/* net.c: transmit */                                                 \
	X(tx_packets)                                                          \
	X(tx_bytes)                                                            \
	X(tx_busy)              /* env->tx returned -HAL_EAGAIN */              \
	X(tx_errors)                                                           \
	X(tx_no_gid)            /* the QP has no source address of its family */ \
	/* req.c */                                                           \
	X(req_packets)                                                         \
	X(req_retransmits)      /* packets sent again after a rewind */         \
	X(req_window_full)                                                     \
	X(req_inflight_full)    /* ROCEV2_MAX_INFLIGHT_WQE WQEs unacknowledged */ \
	X(req_rd_atomic_limit)  /* waited for max_rd_atomic */                  \
	X(req_fence_wait)                                                      \
	X(req_bad_wqe)          /* invalid WQE completed with an error */       \
	/* comp.c */                                                          \
	X(comp_acks)                                                           \
	X(comp_naks_seq)                                                       \
	X(comp_naks_rnr)                                                       \
	X(comp_naks_fatal)      /* 0x61..0x63 */                                \
	X(comp_retry_timeouts)                                                 \
	X(comp_retry_exceeded)                                                 \
	X(comp_rnr_exceeded)                                                   \
	X(comp_dup_acks)        /* ACK for nothing outstanding: dropped */      \
	X(comp_bad_resp)        /* unexpected opcode/length in a response */    \
	X(comp_completions)                                                    \
	X(comp_naks_stopped)    /* NAK 0x65: peer stopped, QP paused (MigrOS) */ \
	X(comp_paused_drops)    /* response dropped while stopped/paused */     \
	X(comp_out_of_seq)      /* read/atomic response not at comp.psn */      \
	X(comp_bad_state)       /* response while the QP is not RTS/SQD */      \
	/* resp.c */                                                          \
	X(resp_packets)         /* new requests executed */                    \
	X(resp_acks_coalesced)  /* ACKs a later one covered (ack coalescing) */ \
	X(resp_dup_requests)                                                   \
	X(resp_out_of_seq)      /* PSN ahead: NAK PSN sequence error */         \
	X(resp_seq_nak_silent)  /* dropped while a sequence NAK is latched */   \
	X(resp_rnr_naks)                                                       \
	X(resp_inv_req_naks)                                                   \
	X(resp_rem_acc_naks)                                                   \
	X(resp_rem_op_naks)                                                    \
	X(resp_read_replays)                                                   \
	X(resp_atomic_replays)                                                 \
	X(resp_replays_dropped) /* stale replay (or restored reply) stopped: a newer READ/ATOMIC took its slot */ \
	X(resp_acks_sent)                                                      \
	X(resp_stopped_naks)    /* NAK_STOPPED (0x65) while migrating */         \
	X(resp_resumes)         /* MigrOS RESUME accepted: peer address moved */ \
	X(resp_dup_dropped)     /* duplicate read/atomic: no or other resource */ \
	X(resp_bad_state)       /* request while the QP cannot receive */        \
	X(resp_bad_packet)      /* request without BTH/opcode info or IP header */ \
	X(resp_tx_dropped)      /* ACK/NAK not sent (TX full): requester retries */ \
	X(resp_read_packets)    /* read response packets sent (with replays) */  \
	/* objects, queues */                                                 \
	X(cq_overflows)                                                        \
	X(cq_err_drops)         /* CQE refused: CQ already in error */          \
	X(cq_resizes)           /* RESIZE_CQ done */                            \
	X(wq_bad_producer)      /* producer index > size ahead: clamped */      \
	X(rq_bad_wqe)           /* receive WQE with too many SGEs */            \
	X(sge_prot_errors)      /* SGE: bad lkey, PD, bounds or access */       \
	X(srq_limit_events)                                                    \
	X(dma_errors)           /* host memory access failed */                \
	X(flushed_wqes)                                                        \
	X(events_lost)          /* event ring full */                          \
	/* migration (migrate.c, MigrOS): appended, earlier positions kept */  \
	X(mig_pauses)           /* NAK_STOPPED paused a QP: pause timer on */   \
	X(mig_pause_timeouts)   /* peer never resumed: QP to ERR, error CQEs */ \
	X(mig_resumes_sent)     /* RESUME sent (first transmission) */         \
	X(mig_resume_retransmits) /* RESUME sent again: no ACK within the period */ \
	X(mig_resumes_acked)    /* our RESUME ACKed: requester rewinds */      \
	X(mig_resume_forged)    /* RESUME with a missing or wrong MAC: dropped */ \
	X(mig_resume_wait_drops) /* response dropped: our RESUME is not ACKed yet */ \
	X(mig_aborts)           /* rocev2_abort_dump undid a stop */        \
	/* resp.c: resp_inv_req_naks by cause (each also counts in the total;  \
	 * IBA 9.7.5.1.2-9.7.5.1.4), appended */                               \
	X(resp_invreq_no_first)  /* MIDDLE/LAST outside a message */           \
	X(resp_invreq_no_last)   /* not MIDDLE/LAST inside a message */        \
	X(resp_invreq_op_access) /* QP access flags forbid the op */           \
	X(resp_invreq_rd_atomic) /* no free READ/ATOMIC resource */            \
	X(resp_invreq_length)    /* payload/RETH length inconsistent */        \
	X(resp_invreq_recv_long) /* SEND longer than the receive WQE */        \
	X(resp_invreq_misaligned) /* atomic VA not 8-byte aligned */          \
	/* comp.c: checks of IBA 9.7.5.2.2 and 11.6.2, appended */             \
	X(comp_nak_bogus)       /* sequence NAK past what was sent or a READ/atomic */ \
	X(comp_cq_errors)       /* send CQE refused (CQ full/in error): QP to ERR */ \
	/* migration protocol v1 (migrate.c header comment), appended */      \
	X(mig_resume_replayed)  /* RESUME of a past epoch, or of the current one \
				   that would move or un-pause the QP */        \
	X(mig_resume_repeats)   /* RESUME of the current epoch ACKed again */  \
	X(mig_resume_refused)   /* RESUME whose PSN does not fit, or unkeyed   \
				   redirect of a QP that is not Paused */      \
	X(mig_nak_stopped_forged) /* NAK_STOPPED with a missing/wrong MAC or \
				     epoch: no pause */                        \
	X(mig_unkeyed_refused)  /* RESUME/NAK_STOPPED without a MAC and no     \
				   MNIC_MIG_CFG_UNKEYED */                     \
	X(mig_resume_gave_up)   /* RESUME budget spent: QP to ERR, error CQEs */ \
	/* mtt.c: memory translation (issue 14), appended */                  \
	X(mtt_refused_shape)    /* CREATE: page shift, length 0 or wrapping range */ \
	X(mtt_refused_nomem)    /* CREATE: no free MTT or run of entries */    \
	X(mtt_refused_range)    /* WRITE: first + count past npages */         \
	X(mtt_refused_align)    /* WRITE: a page not aligned to the page size */ \
	X(mtt_refused_page)     /* WRITE: a page not wholly inside the aperture */ \
	X(mtt_refused_busy)     /* WRITE in use and not Stopped / DESTROY in use */ \
	X(mtt_refused_cover)    /* MR/ring: no such MTT, another owner's, or   \
				   its range not inside the MTT's */          \
	X(mtt_refused_unwritten) /* MR/ring on an MTT not fully written */    \
	X(mtt_resume_unwritten) /* resume refused: an MTT not fully written */ \
	X(xlate_faults)         /* data path: IOVA outside its MTT or unwritten */ \
	/* comp.c: loss recovery without the timer (issue 18), appended */   \
	X(comp_nak_retries)     /* go-back-N started by a sequence NAK */       \
	X(comp_gap_retries)     /* ... by a response past a lost read/atomic response */ \
	X(comp_retry_dup_ignored) /* NAK or gap the round under way answers already */ \
	X(comp_fast_retry_spent) /* news of a loss after ROCEV2_FAST_RETRIES: the timer's */ \
	X(req_head_repeats)     /* a retry round's first packet sent twice (req.c) */ \
	/* eq.c: completion events (issue 15), appended */                   \
	X(cq_arms)              /* an arm (or an upgrade to NEXT) taken */     \
	X(cq_arm_refused)       /* arm word: unknown cmd or reserved bits set */ \
	X(cq_arm_stale)         /* arm with a spent or out-of-sequence sn */   \
	X(cq_arm_no_eq)         /* arm of a CQ bound to no EQ */              \
	X(cq_events)            /* EQEs written (one per arm) */              \
	X(cq_events_at_arm)     /* ... of them fired by the arm itself: CQEs   \
				   had landed past the consumer index */       \
	X(eq_overflows)         /* EQ full: no EQE, the CQ stays armed */      \
	X(eq_raises)            /* host vector raised after an EQE */   \
	/* cc.c: DCQCN congestion control (issue 18), appended */               \
	X(ecn_ce_received)      /* packet for a QP arrived marked CE (RFC 3168) */ \
	X(cnp_sent)             /* notification point: CNP to the marked packet's sender */ \
	X(cnp_suppressed)       /* CE within cnp_interval_us of the QP's last CNP */ \
	X(cnp_received)         /* CNP delivered to a QP (reaction point) */    \
	X(cnp_malformed)        /* CNP with a bad length, pad or no BECN: dropped */ \
	X(cnp_no_qp)            /* CNP for an unknown or stale QPN: dropped */  \
	X(rate_cuts)            /* CNP cut a QP's rate: Rc *= 1 - alpha/2 */    \
	X(rate_increases)       /* T or B event raised a QP's rate */           \
	X(pacer_waits)          /* requester waited for the pacer's tokens */ \
	/* ethq.c: host Ethernet queues (issue 16), appended */               \
	X(rx_ethq_frames)       /* non-RoCE frame written to the host RX ring */ \
	X(rx_ethq_full)         /* ... dropped: no RX descriptor posted */      \
	X(rx_ethq_too_long)     /* ... dropped: longer than the posted buffer */ \
	X(rx_ethq_not_ours)     /* ... dropped: unicast to another station */   \
	X(tx_ethq_frames)       /* host TX frame sent to the wire */            \
	X(tx_ethq_bad_len)      /* ... refused: size < 14 or > the max frame */ \
	X(tx_ethq_busy)         /* ... wire TX full: retried next pass */       \
	X(ethq_dma_errors)      /* descriptor or buffer outside its MTT */ \
	/* req.c: inline data (mnic/queues.h MNIC_SEND_INLINE), appended */    \
	X(req_inline_pkts)      /* packets whose payload came from the WQE */

struct rocev2_counters {
#define ROCEV2_COUNTER_FIELD(name) uint64_t name;
	ROCEV2_COUNTERS(ROCEV2_COUNTER_FIELD)
#undef ROCEV2_COUNTER_FIELD
};

extern const char *const rocev2_counter_names[];
#define ROCEV2_NUM_COUNTERS (sizeof(struct rocev2_counters) / sizeof(uint64_t))

#endif
