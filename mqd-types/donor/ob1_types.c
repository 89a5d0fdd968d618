/*
 * Type donor for the ob1 PML's unexpected-message queue.
 *
 * Open MPI 4.1.4's message queue DLL answers mqs_no_information for unexpected messages, so
 * mqd-types reads them itself: communicator -> c_pml_comm (mca_pml_ob1_comm_t) -> procs[peer]
 * (mca_pml_ob1_comm_proc_t) -> unexpected_frags / frags_cant_match -> mca_pml_ob1_recv_frag_t
 * and its match / rendezvous header. The ob1 headers are not installed: the build script
 * unpacks them from Debian's source package of the installed version and compiles this file
 * with -g against them and the installed internal headers; mqd-types reads the layouts from the
 * DWARF and the constants below from the object's data.
 */
#include "ompi_config.h"

#include "opal/class/opal_list.h"
#include "opal/class/opal_pointer_array.h"
#include "ompi/communicator/communicator.h"
#include "ompi/mca/pml/pml.h"
#include "ompi/version.h"
#include "pml_ob1.h"
#include "pml_ob1_comm.h"
#include "pml_ob1_hdr.h"
#include "pml_ob1_recvfrag.h"

opal_list_item_t mqd_ob1_donor_opal_list_item;
opal_list_t mqd_ob1_donor_opal_list;
opal_free_list_item_t mqd_ob1_donor_opal_free_list_item;
opal_pointer_array_t mqd_ob1_donor_opal_pointer_array;
ompi_communicator_t mqd_ob1_donor_ompi_communicator;
mca_pml_base_component_t mqd_ob1_donor_mca_pml_base_component;
mca_base_component_t mqd_ob1_donor_mca_base_component;
mca_pml_ob1_t mqd_ob1_donor_mca_pml_ob1;
mca_pml_ob1_comm_t mqd_ob1_donor_mca_pml_ob1_comm;
mca_pml_ob1_comm_proc_t mqd_ob1_donor_mca_pml_ob1_comm_proc;
mca_pml_ob1_recv_frag_t mqd_ob1_donor_mca_pml_ob1_recv_frag;
mca_pml_ob1_hdr_t mqd_ob1_donor_mca_pml_ob1_hdr;
mca_pml_ob1_common_hdr_t mqd_ob1_donor_mca_pml_ob1_common_hdr;
mca_pml_ob1_match_hdr_t mqd_ob1_donor_mca_pml_ob1_match_hdr;
mca_pml_ob1_rendezvous_hdr_t mqd_ob1_donor_mca_pml_ob1_rendezvous_hdr;
mca_pml_ob1_rget_hdr_t mqd_ob1_donor_mca_pml_ob1_rget_hdr;
mca_btl_base_segment_t mqd_ob1_donor_mca_btl_base_segment;

/* The constants of the headers that the walk needs (read from the object's data). */
const long long mqd_const_match_hdr_len = OMPI_PML_OB1_MATCH_HDR_LEN;
const long long mqd_const_hdr_type_match = MCA_PML_OB1_HDR_TYPE_MATCH;
const long long mqd_const_hdr_type_rndv = MCA_PML_OB1_HDR_TYPE_RNDV;
const long long mqd_const_hdr_type_rget = MCA_PML_OB1_HDR_TYPE_RGET;

/* The Open MPI version whose headers this object was compiled from. */
const char mqd_donor_ompi_version[] = OMPI_VERSION;
