/* virtio-mmio transport registers and virtio-net bit names.
 *
 * Private to hal/qemu-virt/virtio_net.c and its unit test (the fake device
 * model).  Offsets are the modern (Version 2) layout of virtio 1.1 section
 * 4.2.2; the legacy-only registers (GuestPageSize, QueueAlign, QueuePFN) are
 * deliberately absent because the driver refuses Version 1 devices.
 */
#ifndef VIRTIO_MMIO_REGS_H
#define VIRTIO_MMIO_REGS_H

/* virtio 1.1 4.2.2, table 4.1.  Every register here is 32 bits wide and must
 * be accessed with aligned 32-bit accesses (4.2.2.2). */
#define VIRTIO_MMIO_MAGIC_VALUE          0x000u
#define VIRTIO_MMIO_VERSION              0x004u
#define VIRTIO_MMIO_DEVICE_ID            0x008u
#define VIRTIO_MMIO_VENDOR_ID            0x00cu
#define VIRTIO_MMIO_DEVICE_FEATURES      0x010u
#define VIRTIO_MMIO_DEVICE_FEATURES_SEL  0x014u
#define VIRTIO_MMIO_DRIVER_FEATURES      0x020u
#define VIRTIO_MMIO_DRIVER_FEATURES_SEL  0x024u
#define VIRTIO_MMIO_QUEUE_SEL            0x030u
#define VIRTIO_MMIO_QUEUE_NUM_MAX        0x034u
#define VIRTIO_MMIO_QUEUE_NUM            0x038u
#define VIRTIO_MMIO_QUEUE_READY          0x044u
#define VIRTIO_MMIO_QUEUE_NOTIFY         0x050u
#define VIRTIO_MMIO_INTERRUPT_STATUS     0x060u
#define VIRTIO_MMIO_INTERRUPT_ACK        0x064u
#define VIRTIO_MMIO_STATUS               0x070u
#define VIRTIO_MMIO_QUEUE_DESC_LOW       0x080u
#define VIRTIO_MMIO_QUEUE_DESC_HIGH      0x084u
#define VIRTIO_MMIO_QUEUE_DRIVER_LOW     0x090u  /* available ring */
#define VIRTIO_MMIO_QUEUE_DRIVER_HIGH    0x094u
#define VIRTIO_MMIO_QUEUE_DEVICE_LOW     0x0a0u  /* used ring */
#define VIRTIO_MMIO_QUEUE_DEVICE_HIGH    0x0a4u
#define VIRTIO_MMIO_CONFIG_GENERATION    0x0fcu
#define VIRTIO_MMIO_CONFIG               0x100u  /* device-specific, 4.2.2.2 widths */

#define VIRTIO_MMIO_MAGIC                0x74726976u  /* "virt", little-endian */
#define VIRTIO_MMIO_VERSION_LEGACY       1u
#define VIRTIO_MMIO_VERSION_MODERN       2u

/* virtio 1.1 5: device types; 0 marks an empty virtio-mmio slot (4.2.3.1.1). */
#define VIRTIO_ID_NONE                   0u
#define VIRTIO_ID_NET                    1u

/* InterruptStatus / InterruptACK bits (4.2.2, table 4.1). */
#define VIRTIO_MMIO_INT_USED_BUFFER      (1u << 0)
#define VIRTIO_MMIO_INT_CONFIG_CHANGE    (1u << 1)

/* Device status field (virtio 1.1 2.1). */
#define VIRTIO_STATUS_ACKNOWLEDGE        1u
#define VIRTIO_STATUS_DRIVER             2u
#define VIRTIO_STATUS_DRIVER_OK          4u
#define VIRTIO_STATUS_FEATURES_OK        8u
#define VIRTIO_STATUS_DEVICE_NEEDS_RESET 64u
#define VIRTIO_STATUS_FAILED             128u

/* Feature bit numbers.  DeviceFeatures/DriverFeatures expose 32 bits per
 * page selected by *FeaturesSel: bits 0..31 on page 0, 32..63 on page 1. */
#define VIRTIO_F_VERSION_1               32u  /* 6.1 */
#define VIRTIO_NET_F_CSUM                0u   /* 5.1.3, never accepted here */
#define VIRTIO_NET_F_MAC                 5u
#define VIRTIO_NET_F_MRG_RXBUF           15u
#define VIRTIO_NET_F_STATUS              16u
#define VIRTIO_NET_F_CTRL_VQ             17u
#define VIRTIO_FEATURE(bit)              (1ull << (bit))

/* virtio-net device configuration layout (5.1.4), offsets from
 * VIRTIO_MMIO_CONFIG.  mac is u8[6]: read it with 8-bit accesses. */
#define VIRTIO_NET_CFG_MAC               0x00u
#define VIRTIO_NET_CFG_STATUS            0x06u

/* virtio-net queue numbers without VIRTIO_NET_F_MQ (5.1.2). */
#define VIRTIO_NET_QUEUE_RX              0u
#define VIRTIO_NET_QUEUE_TX              1u

/* struct virtio_net_hdr with VERSION_1 and without MRG_RXBUF still carries
 * num_buffers, so it is 12 bytes (5.1.6); legacy devices use 10. */
#define VIRTIO_NET_HDR_LEN               12u

/* Split virtqueue bits (2.6.5, 2.6.6, 2.6.8). */
#define VIRTQ_DESC_F_NEXT                1u
#define VIRTQ_DESC_F_WRITE               2u
#define VIRTQ_DESC_F_INDIRECT            4u
#define VIRTQ_AVAIL_F_NO_INTERRUPT       1u
#define VIRTQ_USED_F_NO_NOTIFY           1u

/* Split-ring alignment (2.6, table 2.2). */
#define VIRTQ_DESC_ALIGN                 16u
#define VIRTQ_AVAIL_ALIGN                2u
#define VIRTQ_USED_ALIGN                 4u

#endif
