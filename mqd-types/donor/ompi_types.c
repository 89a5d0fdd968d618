/*
 * Type donor for Open MPI's message queue DLL (libompi_dbg_msgq.so).
 *
 * Debian's libmpi.so.40 is stripped, so the DLL's mqs_image_has_queues cannot find the types
 * it reads the queues with. This file is compiled with `-g` against the Open MPI headers that
 * libopenmpi-dev installs for the same version; mqd-types reads the DWARF of the object and
 * answers the DLL's type, field-offset and sizeof questions from it.
 *
 * Each needed type is used by one variable below, so the compiler keeps its DWARF: the 19 types
 * Open MPI 4.1.4's DLL asks for in mqs_image_has_queues, all from installed headers. (Its source
 * also names the ob1 PML's header and fragment types, whose headers are not installed, but the
 * 4.1.4 DLL does not look them up: it has no unexpected-message queue.)
 */
#include "ompi_config.h"

#include "opal/class/opal_list.h"
#include "opal/class/opal_free_list.h"
#include "opal/class/opal_hash_table.h"
#include "opal/class/opal_pointer_array.h"
#include "opal/datatype/opal_datatype.h"
#include "ompi/request/request.h"
#include "ompi/mca/pml/base/pml_base_request.h"
#include "ompi/mca/pml/base/pml_base_sendreq.h"
#include "ompi/mca/pml/base/pml_base_recvreq.h"
#include "ompi/communicator/communicator.h"
#include "ompi/mca/topo/topo.h"
#include "ompi/group/group.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/version.h"

opal_list_item_t mqd_donor_opal_list_item;
opal_list_t mqd_donor_opal_list;
opal_free_list_item_t mqd_donor_opal_free_list_item;
opal_free_list_t mqd_donor_opal_free_list;
opal_hash_table_t mqd_donor_opal_hash_table;
opal_pointer_array_t mqd_donor_opal_pointer_array;
opal_datatype_t mqd_donor_opal_datatype;
ompi_request_t mqd_donor_ompi_request;
mca_pml_base_request_t mqd_donor_mca_pml_base_request;
mca_pml_base_send_request_t mqd_donor_mca_pml_base_send_request;
mca_pml_base_recv_request_t mqd_donor_mca_pml_base_recv_request;
ompi_communicator_t mqd_donor_ompi_communicator;
mca_topo_base_module_t mqd_donor_mca_topo_base_module;
mca_topo_base_comm_cart_2_2_0_t mqd_donor_mca_topo_base_comm_cart;
mca_topo_base_comm_graph_2_2_0_t mqd_donor_mca_topo_base_comm_graph;
mca_topo_base_comm_dist_graph_2_2_0_t mqd_donor_mca_topo_base_comm_dist_graph;
ompi_group_t mqd_donor_ompi_group;
ompi_status_public_t mqd_donor_ompi_status_public;
ompi_datatype_t mqd_donor_ompi_datatype;

/* The Open MPI version whose headers this object was compiled from. */
const char mqd_donor_ompi_version[] = OMPI_VERSION;
